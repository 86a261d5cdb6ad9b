package developer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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
		SELECT id, agent, name, pid, start_time, boot, argv, cwd, port, log_path, started_at
		FROM developer.processes WHERE stopped_at IS NULL AND ($1 = '' OR agent = $1) AND ($2 = '' OR name = $2)
		ORDER BY agent, name`, agent, name)
	if err != nil {
		return nil, fmt.Errorf("developer: list processes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Process, error) {
		var p Process
		var st int64
		var argv []byte
		err := r.Scan(&p.ID, &p.Agent, &p.Name, &p.Pid, &st, &p.ident.Boot, &argv, &p.Cwd, &p.Port, &p.LogPath, &p.StartedAt)
		if err == nil {
			err = json.Unmarshal(argv, &p.Argv)
		}
		p.ident.Pid, p.ident.StartTime = p.Pid, uint64(st)
		p.Running = spawn.Alive(p.ident)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("developer: list processes: %w", err)
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
