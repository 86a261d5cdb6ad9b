package developer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/seal"
	"buddi/plugins/developer/spawn"
	"buddi/supervisor/proc"
)

// Process is a long-lived process an agent started, as its row records it.
type Process struct {
	// ID is the row.
	ID int64 `json:"id"`
	// Agent is whose it is.
	Agent string `json:"agent"`
	// Name is its name, unique among running processes.
	Name string `json:"name"`
	// Pid is its process id (and group id); after a crash, the last one's.
	Pid int `json:"pid"`
	// Argv is what was spawned.
	Argv []string `json:"argv"`
	// Cwd is where.
	Cwd string `json:"cwd"`
	// Port is the port it said it listens on, if any.
	Port *int `json:"port"`
	// LogPath is its output.
	LogPath string `json:"log_path"`
	// StartedAt is when its current (or last) process started.
	StartedAt time.Time `json:"started_at"`
	// Running is whether that very process still runs.
	Running bool `json:"running"`
	// State is what the row says: running, restarting (it crashed and is started again
	// after a backoff), exited, or gave_up (it kept crashing and buddi stopped it).
	State string `json:"state"`
	// Restarts counts the times buddi started it again after a crash.
	Restarts int `json:"restarts"`
	// Note is, for a process that ended, one sentence for the owner on how.
	Note string `json:"note,omitempty"`

	ident spawn.Identity
}

// States of a process row.
const (
	stateRunning    = "running"
	stateRestarting = "restarting"
	stateExited     = "exited"
	stateStopped    = "stopped"
	stateGaveUp     = "gave_up"
)

// endedShown is how long a process that ended by itself (exited, or given up) stays in the
// listing, so the owner sees what became of it.
const endedShown = 24 * time.Hour

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

// Processes lists the processes recorded as running (or waiting to be started again after
// a crash), of agent or of every agent when agent is empty, each checked against the system
// (a recycled pid is not running), and those that ended by themselves within the last day
// (exited, or given up with the sentence that says so) unless the name runs again.
func (s *Store) Processes(ctx context.Context, agent string) ([]Process, error) {
	return s.processes(ctx, agent, "", true)
}

// RunningProcess is the process recorded as running under name (names are unique among
// them), checked against the system: one row. ErrNoProcess when there is none. buddi serve's
// previews ask the process host instead (supervisor.ProcessHost.Lookup), from memory.
func (s *Store) RunningProcess(ctx context.Context, name string) (Process, error) {
	list, err := s.processes(ctx, "", name, false)
	if err != nil {
		return Process{}, err
	}
	if len(list) == 0 {
		return Process{}, fmt.Errorf("%q: %w", name, ErrNoProcess)
	}
	return list[0], nil
}

// processes reads the rows recorded as live, narrowed to an agent and a name when given, and
// with ended, those that ended by themselves lately.
func (s *Store) processes(ctx context.Context, agent, name string, ended bool) ([]Process, error) {
	if s == nil || s.pool == nil {
		return nil, errNoDatabase
	}
	rows, err := s.pool.Query(ctx, `
		SELECT id, agent, name, pid, start_time, boot, argv, cwd, port, log_path, started_at, seal, state, restarts, note
		FROM developer.processes p
		WHERE ($1 = '' OR agent = $1) AND ($2 = '' OR name = $2)
		  AND (stopped_at IS NULL
		       OR $3 AND state IN ('exited', 'gave_up') AND stopped_at > now() - make_interval(secs => $4)
		          AND NOT EXISTS (SELECT 1 FROM developer.processes q WHERE q.agent = p.agent AND q.name = p.name AND q.id > p.id))
		ORDER BY agent, name`, agent, name, ended, endedShown.Seconds())
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
		err := r.Scan(&p.ID, &p.Agent, &p.Name, &p.Pid, &st, &p.ident.Boot, &argv, &p.Cwd, &p.Port, &p.LogPath, &p.StartedAt, &p.seal, &p.State, &p.Restarts, &p.Note)
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
		p.Running = (p.State == stateRunning || p.State == stateRestarting) && spawn.Alive(p.ident)
		out = append(out, p.Process)
	}
	return out, nil
}

// StopProcess stops agent's process name (when that very process still runs: a recycled pid
// is never signalled) and records it stopped. It works from any process on the machine, so
// the owner's command line can stop what buddi serve started: the row says stopped before
// the signal goes, so serve's actor for it takes the exit for a stop, not a crash.
func (s *Store) StopProcess(ctx context.Context, agent, name string) error {
	list, err := s.processes(ctx, agent, name, false)
	if err != nil {
		return err
	}
	if len(list) > 0 { // a name runs at most once
		p := list[0]
		tag, err := s.pool.Exec(ctx, `UPDATE developer.processes SET stopped_at = now(), state = 'stopped' WHERE id = $1 AND stopped_at IS NULL`, p.ID)
		if err != nil {
			return fmt.Errorf("developer: record %s stopped: %w", name, err)
		}
		if tag.RowsAffected() > 0 { // else: stopped meanwhile
			if p.Running {
				if err := spawn.Stop(p.ident, 5*time.Second); err != nil && !errors.Is(err, spawn.ErrStale) {
					_, _ = s.pool.Exec(context.WithoutCancel(ctx), `UPDATE developer.processes SET stopped_at = NULL, state = $2 WHERE id = $1`, p.ID, p.State)
					return fmt.Errorf("developer: stop %s: %w", name, err)
				}
			}
			return nil
		}
	}
	return fmt.Errorf("%s has no running process %q: %w", agent, name, ErrNoProcess)
}

// processRow is what a process's actor needs of its row to keep it: which row, and what
// its seal binds besides the process's identity.
type processRow struct {
	id          int64
	agent, name string
	argv        []string
	cwd         string
	port        *int
	logPath     string
}

// stoppedByOwner reports whether the row says the process was stopped (or ended) already:
// an exit then is no crash.
func (s *Store) stoppedByOwner(ctx context.Context, id int64) (bool, error) {
	var ended bool
	if err := s.pool.QueryRow(ctx, `SELECT stopped_at IS NOT NULL FROM developer.processes WHERE id = $1`, id).Scan(&ended); err != nil {
		return false, fmt.Errorf("developer: read process %d: %w", id, err)
	}
	return ended, nil
}

// recordRestart records a process started again after a crash in its row: its identity, a
// new seal, one more restart. proc.ErrStopped when the row was stopped meanwhile.
func (s *Store) recordRestart(ctx context.Context, r processRow, id spawn.Identity, started time.Time) error {
	sum, err := s.sealProcess(r.agent, r.name, id, r.argv, r.cwd, r.port, r.logPath, started)
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `
		UPDATE developer.processes SET pid = $2, start_time = $3, boot = $4, started_at = $5, seal = $6,
			state = 'running', restarts = restarts + 1
		WHERE id = $1 AND stopped_at IS NULL`, r.id, id.Pid, int64(id.StartTime), id.Boot, started, sum)
	if err != nil {
		return fmt.Errorf("developer: record %s started again: %w", r.name, err)
	}
	if tag.RowsAffected() == 0 {
		return proc.ErrStopped
	}
	return nil
}

// recordEvent writes what the process host learnt to the row: a crash (restarting), an end
// (exited), a give-up, with the event the owner hears of it.
func (s *Store) recordEvent(ctx context.Context, id int64, ev proc.Event) error {
	var err error
	switch ev.Kind {
	case proc.Crashed:
		_, err = s.pool.Exec(ctx, `UPDATE developer.processes SET state = 'restarting', note = $2 WHERE id = $1 AND stopped_at IS NULL`, id, ev.Reason)
	case proc.Exited:
		_, err = s.pool.Exec(ctx, `UPDATE developer.processes SET stopped_at = now(), state = 'exited', note = $2 WHERE id = $1 AND stopped_at IS NULL`, id, ev.Sentence)
	case proc.GaveUp:
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `UPDATE developer.processes SET stopped_at = now(), state = 'gave_up', note = $2 WHERE id = $1 AND stopped_at IS NULL`, id, ev.Sentence)
			if err != nil || tag.RowsAffected() == 0 {
				return err // stopped meanwhile: nothing to tell
			}
			_, err = eventlog.Append(ctx, tx, events.ProcessGaveUp, "", events.ProcessGaveUpPayload{
				Agent: ev.Workspace, Name: ev.Name, Reason: ev.Reason, Restarts: ev.Restarts, Sentence: ev.Sentence})
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("developer: record that %s %s: %w", ev.Name, ev.Kind, err)
	}
	return nil
}

// recorder writes a process host's events to the row id.
func (s *Store) recorder(id int64) func(ctx context.Context, ev proc.Event) {
	return func(ctx context.Context, ev proc.Event) {
		if err := s.recordEvent(ctx, id, ev); err != nil && s.Log != nil {
			s.Log.Error("record a process event", "service", "developer", "name", ev.Name, "event", ev.Kind, "err", err)
		}
	}
}

// endUnowned records a live row whose process no buddi owns any more as stopped (sentence
// says how): it was gone when buddi started, or could not be supervised and was stopped.
func (s *Store) endUnowned(ctx context.Context, id int64, sentence string) error {
	if _, err := s.pool.Exec(ctx, `UPDATE developer.processes SET stopped_at = now(), state = 'stopped', note = $2 WHERE id = $1 AND stopped_at IS NULL`, id, sentence); err != nil {
		return fmt.Errorf("developer: record process %d ended: %w", id, err)
	}
	return nil
}
