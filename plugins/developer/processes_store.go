package developer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/seal"
	"buddi/plugins/developer/spawn"
)

// Process is a long-lived process an agent started, as its row records it.
type Process struct {
	// ID is the row.
	ID int64 `json:"id"`
	// Agent is whose it is.
	Agent string `json:"agent"`
	// Name is its name, unique among running processes.
	Name string `json:"name"`
	// Pid is its process id (and group id).
	Pid int `json:"pid"`
	// Argv is what was spawned.
	Argv []string `json:"argv"`
	// Cwd is where.
	Cwd string `json:"cwd"`
	// Port is the port it said it listens on, if any.
	Port *int `json:"port"`
	// LogPath is its output.
	LogPath string `json:"log_path"`
	// StartedAt is when.
	StartedAt time.Time `json:"started_at"`
	// Running is whether that very process still runs.
	Running bool `json:"running"`

	ident spawn.Identity
}

// purposeProcess is the seal's purpose for a process row.
const purposeProcess = "developer.process"

// processFields are what a process row's seal binds: who, which name, which process (pid,
// start time, boot), what was spawned where, its port, its log and when.
func processFields(agent, name string, id spawn.Identity, argv []string, cwd string, port *int, logPath string, started time.Time) []string {
	p := ""
	if port != nil {
		p = fmt.Sprint(*port)
	}
	return []string{agent, name, fmt.Sprint(id.Pid), fmt.Sprint(id.StartTime), id.Boot, strings.Join(argv, "\x00"), cwd, p, logPath, seal.Stamp(started)}
}

// sealProcess is the seal of a process row developer.start records.
func (s *Store) sealProcess(agent, name string, id spawn.Identity, argv []string, cwd string, port *int, logPath string, started time.Time) (string, error) {
	if s.key.IsZero() {
		return "", ErrNoKey
	}
	return s.key.Seal(purposeProcess, processFields(agent, name, id, argv, cwd, port, logPath, started)...), nil
}

// ErrNoProcess means the agent has no running process of that name.
var ErrNoProcess = errors.New("developer: no such process")

// Processes lists the processes recorded as running, of agent or of every agent when agent
// is empty, each checked against the system (a recycled pid is not running).
func (s *Store) Processes(ctx context.Context, agent string) ([]Process, error) {
	return s.processes(ctx, agent, "")
}

// RunningProcess is the process recorded as running under name (names are unique among
// them), checked against the system: one row, for what is asked on every preview request.
// ErrNoProcess when there is none.
func (s *Store) RunningProcess(ctx context.Context, name string) (Process, error) {
	list, err := s.processes(ctx, "", name)
	if err != nil {
		return Process{}, err
	}
	if len(list) == 0 {
		return Process{}, fmt.Errorf("%q: %w", name, ErrNoProcess)
	}
	return list[0], nil
}

// processes reads the rows recorded as running, narrowed to an agent and a name when given.
func (s *Store) processes(ctx context.Context, agent, name string) ([]Process, error) {
	if s == nil || s.pool == nil {
		return nil, errNoDatabase
	}
	rows, err := s.pool.Query(ctx, `
		SELECT id, agent, name, pid, start_time, boot, argv, cwd, port, log_path, started_at, seal
		FROM developer.processes WHERE stopped_at IS NULL AND ($1 = '' OR agent = $1) AND ($2 = '' OR name = $2)
		ORDER BY agent, name`, agent, name)
	if err != nil {
		return nil, fmt.Errorf("developer: list processes: %w", err)
	}
	type sealed struct {
		Process
		seal string
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sealed, error) {
		var p sealed
		var st int64
		var argv []byte
		err := r.Scan(&p.ID, &p.Agent, &p.Name, &p.Pid, &st, &p.ident.Boot, &argv, &p.Cwd, &p.Port, &p.LogPath, &p.StartedAt, &p.seal)
		if err == nil {
			err = json.Unmarshal(argv, &p.Argv)
		}
		p.ident.Pid, p.ident.StartTime = p.Pid, uint64(st)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("developer: list processes: %w", err)
	}
	var out []Process
	for _, p := range all {
		// A row buddi did not write names no process of the agent's: it is never signalled,
		// shown or proxied to.
		if why := s.key.Why(p.seal, purposeProcess, processFields(p.Agent, p.Name, p.ident, p.Argv, p.Cwd, p.Port, p.LogPath, p.StartedAt)...); why != "" {
			s.refuse(ctx, "process", fmt.Sprint(p.ID), why, "nothing was signalled; a process buddi starts records itself")
			continue
		}
		p.Running = spawn.Alive(p.ident)
		out = append(out, p.Process)
	}
	return out, nil
}

// StopProcess stops agent's process name (when that very process still runs: a recycled pid
// is never signalled) and records it stopped. It works from any process on the machine, so
// the owner's command line can stop what buddi serve started; serve's actor for it then
// sees it exit.
func (s *Store) StopProcess(ctx context.Context, agent, name string) error {
	list, err := s.Processes(ctx, agent)
	if err != nil {
		return err
	}
	for _, p := range list {
		if p.Name != name {
			continue
		}
		if p.Running {
			if err := spawn.Stop(p.ident, 5*time.Second); err != nil && !errors.Is(err, spawn.ErrStale) {
				return fmt.Errorf("developer: stop %s: %w", name, err)
			}
		}
		if _, err := s.pool.Exec(ctx, `UPDATE developer.processes SET stopped_at = now() WHERE id = $1 AND stopped_at IS NULL`, p.ID); err != nil {
			return fmt.Errorf("developer: record %s stopped: %w", name, err)
		}
		return nil
	}
	return fmt.Errorf("%s has no running process %q: %w", agent, name, ErrNoProcess)
}
