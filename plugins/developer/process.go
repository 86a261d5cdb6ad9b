package developer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"buddi/plugins"
	"buddi/plugins/developer/runlist"
	"buddi/plugins/developer/spawn"
	"buddi/supervisor/proc"
)

// MaxProcesses is how many long-lived processes one agent may run at once (§4).
const MaxProcesses = 4

// ProcessHost supervises long-lived processes: buddi serve's is the actor tree's
// (supervisor.ProcessHost: a supervising actor per workspace, an actor per process that owns
// it, starts it again after a crash within the workspace's budget, and stops it when it
// stops), so buddi's stop stops them.
type ProcessHost interface {
	// Adopt supervises spec.First as spec.Name in spec.Workspace (the agent's); on an error
	// nothing does, and the caller stops it.
	Adopt(ctx context.Context, spec proc.Spec) error
	// Stop stops agent's process name and waits for it to have stopped.
	Stop(ctx context.Context, agent, name string) error
	// StopAll stops every process of agent (its workspace changed, or it was removed).
	StopAll(ctx context.Context, agent string) error
}

// localHost is the ProcessHost of a plugin given none (tests, the CLI): processes are held
// here and stopped by Stop and StopAll, with no supervision tree around them: nothing starts
// one again.
type localHost struct {
	mu    sync.Mutex
	procs map[string]map[string]proc.Proc
}

// Adopt keeps spec.First.
func (h *localHost) Adopt(_ context.Context, spec proc.Spec) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.procs == nil {
		h.procs = map[string]map[string]proc.Proc{}
	}
	if h.procs[spec.Workspace] == nil {
		h.procs[spec.Workspace] = map[string]proc.Proc{}
	}
	h.procs[spec.Workspace][spec.Name] = spec.First
	return nil
}

// Stop stops agent's process name.
func (h *localHost) Stop(_ context.Context, agent, name string) error {
	h.mu.Lock()
	p := h.procs[agent][name]
	delete(h.procs[agent], name)
	h.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.Stop(5 * time.Second)
}

// StopAll stops every process of agent.
func (h *localHost) StopAll(ctx context.Context, agent string) error {
	h.mu.Lock()
	names := make([]string, 0, len(h.procs[agent]))
	for n := range h.procs[agent] {
		names = append(names, n)
	}
	h.mu.Unlock()
	var errs []error
	for _, n := range names {
		errs = append(errs, h.Stop(ctx, agent, n))
	}
	return errors.Join(errs...)
}

// startTool is developer.start.
type startTool struct{ p *plugin }

// outputTool is developer.output.
type outputTool struct{ p *plugin }

// stopTool is developer.stop.
type stopTool struct{ p *plugin }

var (
	_ plugins.Tool            = (*startTool)(nil)
	_ plugins.TierNarrower    = (*startTool)(nil)
	_ plugins.PolicyDescriber = (*startTool)(nil)
	_ plugins.Tool            = (*outputTool)(nil)
	_ plugins.TierNarrower    = (*outputTool)(nil)
	_ plugins.Tool            = (*stopTool)(nil)
	_ plugins.TierNarrower    = (*stopTool)(nil)
)

// Spec declares developer.start.
func (t *startTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Name + ".start",
		Description: fmt.Sprintf("Start a long-lived process in your workspace (a dev server, a test watcher) under a name; read it with developer.output and end it with developer.stop. "+
			"At most %d at a time. Spawned like developer.run: no shell, and the same run list decides whether the owner is asked.", MaxProcesses),
		Schema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"name":    {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,31}$", "description": "A short name, e.g. web."},
				"command": {"type": "string", "minLength": 1, "maxLength": 8192},
				"cwd":     {"type": "string", "maxLength": 4096},
				"port":    {"type": "integer", "minimum": 1, "maximum": 65535, "description": "The port it will listen on, if any."}
			},
			"required": ["name", "command"],
			"additionalProperties": false
		}`),
		Effects: []plugins.Effect{plugins.EffectExec},
		Tier:    plugins.TierSession,
		Timeout: time.Minute,
	}
}

// startArgs are developer.start's arguments.
type startArgs struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Cwd     string `json:"cwd"`
	Port    int    `json:"port"`
}

// prepare decides the command exactly as developer.run does.
func (t *startTool) prepare(ctx context.Context, call plugins.Call) (startArgs, *runCall, error) {
	var a startArgs
	if err := decodeArgs(call.Args, &a); err != nil {
		return a, nil, err
	}
	raw, _ := json.Marshal(runArgs{Command: a.Command, Cwd: a.Cwd})
	rc, err := (&runTool{p: t.p}).prepare(ctx, plugins.Call{Args: raw, Agent: call.Agent})
	return a, rc, err
}

// TierFor is the run list's verdict, as for developer.run.
func (t *startTool) TierFor(ctx context.Context, call plugins.Call) plugins.Tier {
	_, c, err := t.prepare(ctx, call)
	if err != nil {
		return tierOf(assessment{}, err)
	}
	if c.verdict.Kind == runlist.Auto {
		return c.box.tier(plugins.TierAuto)
	}
	return plugins.TierGated
}

// PolicyFacts shows the permission policy the command.
func (t *startTool) PolicyFacts(plugins.Call) plugins.PolicyFacts {
	return plugins.PolicyFacts{Shell: true}
}

// Describe renders the process to start and the rule that decided.
func (t *startTool) Describe(ctx context.Context, call plugins.Call) (plugins.Envelope, error) {
	a, c, err := t.prepare(ctx, call)
	if err != nil {
		return plugins.Envelope{}, err
	}
	label := "Rule"
	if c.verdict.Kind == runlist.Gated {
		label = "Why a card"
	}
	return plugins.Envelope{
		Summary: fmt.Sprintf("Start %s: `%s` in %s", a.Name, strings.Join(c.verdict.Argv, " "), c.verdict.Dir),
		Effects: []plugins.Effect{plugins.EffectExec},
		Targets: []string{c.verdict.Dir},
		Detail: map[string]any{"name": a.Name, "argv": c.verdict.Argv, "dir": c.verdict.Dir, "port": a.Port, "rule": string(c.verdict.Rule),
			"sandbox": c.box.detail()},
		Preview: fmt.Sprintf("Start %s, kept running until it is stopped or buddi stops:\n%s\nin %s\n%s: %s\n%s",
			a.Name, quoteArgv(c.verdict.Argv), c.verdict.Dir, label, c.verdict.Reason, c.box.describe()),
	}, nil
}

// ReportsDispatch: Execute calls plugins.Dispatch just before the process starts.
func (t *startTool) ReportsDispatch() bool { return true }

// Execute starts the process, supervised by the host, and records it.
func (t *startTool) Execute(ctx context.Context, call plugins.Call, approved *plugins.Envelope) (plugins.Result, error) {
	a, c, err := t.prepare(ctx, call)
	if err != nil {
		return toolResult(err)
	}
	if c.verdict.Kind != runlist.Auto && approved == nil {
		return toolResult(refusef(reasonNeedApproval, Name+".start", c.verdict.Reason))
	}
	if err := t.p.sweepExited(ctx); err != nil {
		return plugins.Result{}, err
	}
	var running int
	if err := t.p.deps.Pool.QueryRow(ctx, `SELECT count(*) FROM developer.processes WHERE agent = $1 AND stopped_at IS NULL`, call.Agent).Scan(&running); err != nil {
		return plugins.Result{}, fmt.Errorf("developer: count processes: %w", err)
	}
	if running >= MaxProcesses {
		return toolResult(refusef("%s already runs %d processes, the most it may; stop one with developer.stop first.", call.Agent, running))
	}
	var owner string
	err = t.p.deps.Pool.QueryRow(ctx, `SELECT agent FROM developer.processes WHERE name = $1 AND stopped_at IS NULL`, a.Name).Scan(&owner)
	if err == nil {
		return toolResult(refusef("A process named %q already runs (for %s); pick another name or stop it first.", a.Name, owner))
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return plugins.Result{}, fmt.Errorf("developer: look up process %s: %w", a.Name, err)
	}
	logPath := filepath.Join(t.p.logDir(), call.Agent+"."+a.Name+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return plugins.Result{}, fmt.Errorf("developer: log directory: %w", err)
	}
	// The box is made for each spawn (its read-only places are looked up then), a restart's too.
	specFor := func() (spawn.Spec, error) {
		return c.box.spec(spawn.Spec{Argv: c.verdict.Argv, Dir: c.verdict.Dir, Env: t.p.boxEnv(c.s, c.box)}, approved, Name+".start")
	}
	spec, err := specFor()
	if err != nil {
		return toolResult(err)
	}
	// Nothing has started yet: from here the process runs, and the ledger says so.
	if err := plugins.Dispatch(ctx); err != nil {
		return toolResult(refusef("%s was not started: %v", c.verdict.Argv[0], err))
	}
	sp, err := spawn.Start(spec, logPath)
	if err != nil {
		return toolResult(refusef("%s could not be started: %v", c.verdict.Argv[0], err))
	}
	startedProcs.Store(logPath, sp)
	id := sp.Identity()
	argv, _ := json.Marshal(c.verdict.Argv)
	var port *int
	if a.Port > 0 {
		port = &a.Port
	}
	started := t.p.deps.Now().UTC().Truncate(time.Microsecond)
	sum, err := t.p.store.sealProcess(call.Agent, a.Name, id, c.verdict.Argv, c.verdict.Dir, port, logPath, started)
	if err != nil {
		_ = sp.Stop(time.Second)
		return plugins.Result{}, err
	}
	row := processRow{agent: call.Agent, name: a.Name, argv: c.verdict.Argv, cwd: c.verdict.Dir, port: port, logPath: logPath}
	if err := t.p.deps.Pool.QueryRow(ctx, `
		INSERT INTO developer.processes (agent, name, pid, start_time, boot, argv, cwd, port, log_path, started_at, seal)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
		call.Agent, a.Name, id.Pid, int64(id.StartTime), id.Boot, string(argv), c.verdict.Dir, port, logPath, started, sum).Scan(&row.id); err != nil {
		_ = sp.Stop(time.Second)
		return plugins.Result{}, fmt.Errorf("developer: record process %s: %w", a.Name, err)
	}
	if err := t.p.host.Adopt(ctx, t.p.supervised(row, specFor, sp)); err != nil {
		_ = sp.Stop(time.Second)
		_, _ = t.p.deps.Pool.Exec(context.WithoutCancel(ctx), `UPDATE developer.processes SET stopped_at = now(), state = 'stopped' WHERE id = $1 AND stopped_at IS NULL`, row.id)
		return plugins.Result{}, err
	}
	return plugins.Result{Text: fmt.Sprintf("Started %s (pid %d): %s in %s. Read its output with developer.output {\"name\":%q}.", a.Name, id.Pid, quoteArgv(c.verdict.Argv), c.verdict.Dir, a.Name)}, nil
}

// supervised is the process first, started from specFor's spec and recorded in row, as the
// host supervises it: after a crash the host starts the same command again (specFor makes
// its box anew), recorded in the same row (the owner's approval was to keep it running
// until it is stopped or buddi stops), and what the host learns is written to the row.
func (p *plugin) supervised(row processRow, specFor func() (spawn.Spec, error), first *spawn.Process) proc.Spec {
	out := proc.Spec{Workspace: row.agent, Name: row.name, First: p.owned(row.id, first), Record: p.store.recorder(row.id)}
	if row.port != nil {
		out.Port = *row.port
	}
	out.Start = func(ctx context.Context) (proc.Proc, error) {
		if ended, err := p.store.stoppedByOwner(ctx, row.id); err != nil {
			return nil, err
		} else if ended {
			return nil, proc.ErrStopped
		}
		spec, err := specFor()
		if err != nil {
			return nil, err
		}
		sp, err := spawn.Start(spec, row.logPath)
		if err != nil {
			return nil, err
		}
		startedProcs.Store(row.logPath, sp)
		if err := p.store.recordRestart(ctx, row, sp.Identity(), p.deps.Now().UTC().Truncate(time.Microsecond)); err != nil {
			_ = sp.Stop(time.Second)
			return nil, err
		}
		return p.owned(row.id, sp), nil
	}
	return out
}

// owned is a process this buddi started, as the host supervises it: its exit is read from
// its wait status, and one after a stop recorded in its row is a stop, not a crash.
func (p *plugin) owned(id int64, sp *spawn.Process) proc.Proc {
	return ownedProc{Process: sp, stopped: func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ended, err := p.store.stoppedByOwner(ctx, id)
		return err == nil && ended
	}}
}

// ownedProc is a spawn.Process as a proc.Proc.
type ownedProc struct {
	*spawn.Process
	stopped func() bool
}

// Pid is the process's id.
func (o ownedProc) Pid() int { return o.Identity().Pid }

// Exit says how it ended: nil for status 0, proc.ErrStopped when its row says it was
// stopped, else its status or signal.
func (o ownedProc) Exit() error {
	e := o.Process.Exit()
	switch {
	case e.Code == 0 && e.Signal == 0:
		return nil
	case o.stopped():
		return proc.ErrStopped
	case e.Signal != 0:
		return fmt.Errorf("was ended by %s", unix.SignalName(e.Signal))
	default:
		return fmt.Errorf("exited with status %d", e.Code)
	}
}

// AdoptSurvivors gives host every process recorded as running that a buddi before this one
// started and did not stop (it was killed, or crashed): buddi serve calls it once at start,
// before anything can start a process. Each row's seal and recorded identity decide: a
// process that still runs with the pid, start time and boot recorded (so not a stranger
// behind a recycled pid) gets an actor, which watches it and stops it on a stop; it cannot
// be started again (nothing of what spawned it is left), so its end is final. A row whose
// process is gone (most often stopped with the buddi before) is recorded as stopped; one
// whose seal does not check is left alone and never signalled. It returns how many it
// adopted.
func (s *Store) AdoptSurvivors(ctx context.Context, host ProcessHost) (int, error) {
	list, err := s.processes(ctx, "", "", false)
	if err != nil {
		return 0, err
	}
	adopted := 0
	for _, p := range list {
		if !p.Running {
			if err := s.endUnowned(ctx, p.ID, p.Name+" was no longer running when buddi started."); err != nil {
				return adopted, err
			}
			continue
		}
		w, err := watchSurvivor(p.ident)
		if err != nil {
			if err := s.endUnowned(ctx, p.ID, p.Name+" was no longer running when buddi started."); err != nil {
				return adopted, err
			}
			continue
		}
		spec := proc.Spec{Workspace: p.Agent, Name: p.Name, First: w, Record: s.recorder(p.ID)}
		if p.Port != nil {
			spec.Port = *p.Port
		}
		if err := host.Adopt(ctx, spec); err != nil {
			// Unowned, it would outlive every stop: stop it now.
			stopErr := w.Stop(5 * time.Second)
			if err := s.endUnowned(ctx, p.ID, fmt.Sprintf("buddi stopped %s when it started again, as it could not supervise it (%v).", p.Name, err)); err != nil {
				return adopted, err
			}
			if stopErr != nil {
				return adopted, fmt.Errorf("developer: stop %s, which could not be adopted: %w", p.Name, stopErr)
			}
			continue
		}
		adopted++
	}
	return adopted, nil
}

// survivor is a process a previous buddi started, watched through a pidfd (it is not this
// buddi's child, so it has no wait status to read).
type survivor struct {
	id   spawn.Identity
	done chan struct{}
}

// errGone is a survivor that ended before it was watched.
var errGone = errors.New("developer: the process is no longer running")

// watchSurvivor watches id's process, checked after the pidfd is open (so the pidfd names
// that very process: start times only grow).
func watchSurvivor(id spawn.Identity) (*survivor, error) {
	pfd, err := unix.PidfdOpen(id.Pid, 0)
	switch {
	case err == nil:
	case err == unix.ESRCH:
		return nil, errGone
	case err == unix.ENOSYS || err == unix.EPERM:
		pfd = -1 // polled instead
	default:
		return nil, fmt.Errorf("developer: watch %v: %w", id, err)
	}
	if !spawn.Alive(id) {
		if pfd >= 0 {
			_ = unix.Close(pfd)
		}
		return nil, errGone
	}
	s := &survivor{id: id, done: make(chan struct{})}
	go s.wait(pfd)
	return s, nil
}

// wait closes done once the process has exited.
func (s *survivor) wait(pfd int) {
	defer close(s.done)
	if pfd >= 0 {
		defer unix.Close(pfd)
		fds := []unix.PollFd{{Fd: int32(pfd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, -1)
			if err == unix.EINTR {
				continue
			}
			if err == nil && n > 0 {
				return
			}
			break // poll failed: fall back to polling its identity
		}
	}
	for spawn.Alive(s.id) {
		time.Sleep(250 * time.Millisecond)
	}
}

// Pid is the process's id.
func (s *survivor) Pid() int { return s.id.Pid }

// Done is closed once it has exited.
func (s *survivor) Done() <-chan struct{} { return s.done }

// Exit is nil: how it ended is its parent's to know, and buddi no longer is.
func (s *survivor) Exit() error { return nil }

// Stop stops it and its group, by its identity (a recycled pid is never signalled).
func (s *survivor) Stop(grace time.Duration) error {
	if err := spawn.Stop(s.id, grace); err != nil && !errors.Is(err, spawn.ErrStale) {
		return err
	}
	<-s.done
	return nil
}

// startedProcs holds the processes this buddi started, by log path (one per agent and
// name), so that developer.stop and developer.output can say what each left in its
// workspace that git outside the box would obey, moved aside when it ended.
var startedProcs sync.Map // log path → *spawn.Process

// quarantineNote says what the process logging to logPath left that was quarantined when it
// ended, or "" (started by another buddi, or nothing left). A process that has exited is
// reaped, and its workspace looked at, within moments: it waits for that up to wait.
func quarantineNote(logPath string, wait time.Duration) string {
	v, ok := startedProcs.Load(logPath)
	if !ok {
		return ""
	}
	proc := v.(*spawn.Process)
	select {
	case <-proc.Done():
		return proc.Quarantine().String()
	default:
	}
	if wait <= 0 {
		return ""
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-proc.Done():
		return proc.Quarantine().String()
	case <-t.C:
		return ""
	}
}

// logDir is where processes' output goes: <data>/developer/logs (§11).
func (p *plugin) logDir() string {
	base := p.deps.DataDir
	if base == "" {
		base = os.TempDir()
	}
	return filepath.Join(base, "developer", "logs")
}

// sweepExited marks running rows whose process is no longer the one recorded (it exited, or
// the machine rebooted and the pid is someone else's) as exited. A row waiting to be started
// again after a crash is its actor's to keep.
func (p *plugin) sweepExited(ctx context.Context) error {
	rows, err := p.deps.Pool.Query(ctx, `SELECT id, pid, start_time, boot FROM developer.processes WHERE stopped_at IS NULL AND state = 'running'`)
	if err != nil {
		return fmt.Errorf("developer: list processes: %w", err)
	}
	type row struct {
		id    int64
		ident spawn.Identity
	}
	live, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		var st int64
		err := r.Scan(&x.id, &x.ident.Pid, &st, &x.ident.Boot)
		x.ident.StartTime = uint64(st)
		return x, err
	})
	if err != nil {
		return fmt.Errorf("developer: list processes: %w", err)
	}
	for _, x := range live {
		if !spawn.Alive(x.ident) {
			if _, err := p.deps.Pool.Exec(ctx, `UPDATE developer.processes SET stopped_at = now(), state = 'exited' WHERE id = $1 AND stopped_at IS NULL`, x.id); err != nil {
				return fmt.Errorf("developer: mark process %d stopped: %w", x.id, err)
			}
		}
	}
	return nil
}

// stopAllProcesses stops every process of agent and records them stopped.
func (p *plugin) stopAllProcesses(ctx context.Context, agent string) error {
	if _, err := p.deps.Pool.Exec(ctx, `UPDATE developer.processes SET stopped_at = now(), state = 'stopped' WHERE agent = $1 AND stopped_at IS NULL`, agent); err != nil {
		return fmt.Errorf("developer: stop %s's processes: %w", agent, err)
	}
	return p.host.StopAll(ctx, agent)
}

// lastProcess finds agent's latest process named name, with what its row says of it.
func (p *plugin) lastProcess(ctx context.Context, agent, name string) (logPath string, ident spawn.Identity, state string, err error) {
	var st int64
	err = p.deps.Pool.QueryRow(ctx, `
		SELECT log_path, pid, start_time, boot, state FROM developer.processes
		WHERE agent = $1 AND name = $2 ORDER BY id DESC LIMIT 1`, agent, name).Scan(&logPath, &ident.Pid, &st, &ident.Boot, &state)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ident, "", refusef("%s has no process named %q.", agent, name)
	}
	ident.StartTime = uint64(st)
	// The log is where developer.start writes it, whatever the row says: a path written into
	// the table would read the owner's files back to the model.
	if want := filepath.Join(p.logDir(), agent+"."+name+".log"); err == nil && logPath != want {
		why := fmt.Sprintf("its log path %s is not where buddi writes the process's log", logPath)
		p.store.refuse(ctx, "process", agent+"/"+name, why, "stop it on Settings → Developer; nothing was read")
		return "", ident, "", refusef("The record of process %q is not one buddi wrote (%s); nothing was read.", name, why)
	}
	return logPath, ident, state, err
}

// nameArgs are developer.output's and developer.stop's arguments.
type nameArgs struct {
	Name  string `json:"name"`
	Since int64  `json:"since"`
}

// Spec declares developer.output.
func (t *outputTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name:        Name + ".output",
		Description: "Read a process's output (the part after since, a byte offset from the last answer), at most 64 KB a call.",
		Schema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"name":  {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,31}$"},
				"since": {"type": "integer", "minimum": 0}
			},
			"required": ["name"],
			"additionalProperties": false
		}`),
		Effects: []plugins.Effect{plugins.EffectRead},
		Tier:    plugins.TierSession,
		Timeout: 30 * time.Second,
	}
}

// TierFor: reading one's own process's output needs no card in any mode.
func (t *outputTool) TierFor(context.Context, plugins.Call) plugins.Tier { return plugins.TierAuto }

// Describe renders what is read.
func (t *outputTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	var a nameArgs
	if err := decodeArgs(call.Args, &a); err != nil {
		return plugins.Envelope{}, err
	}
	return plugins.Envelope{Summary: "Read the output of " + a.Name, Effects: []plugins.Effect{plugins.EffectRead}, Preview: "Read the output of the process " + a.Name}, nil
}

// Execute reads the log, bounded.
func (t *outputTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a nameArgs
	if err := decodeArgs(call.Args, &a); err != nil {
		return toolResult(err)
	}
	logPath, ident, recorded, err := t.p.lastProcess(ctx, call.Agent, a.Name)
	if err != nil {
		return toolResult(err)
	}
	chunk, err := spawn.Tail(logPath, a.Since, 64<<10)
	if err != nil {
		return toolResult(refusef("The output of %s cannot be read: %v", a.Name, err))
	}
	state, note := "running", ""
	switch {
	case recorded == stateRestarting:
		state = "restarting after a crash"
	case !spawn.Alive(ident):
		state = "exited"
		if recorded == stateGaveUp {
			state = "stopped: it kept crashing, and buddi gave up starting it again"
		}
		if n := quarantineNote(logPath, 10*time.Second); n != "" {
			note = n + "\n"
		}
	}
	data, _ := json.Marshal(map[string]any{"name": a.Name, "state": state, "next": chunk.Next, "dropped": chunk.Dropped})
	return plugins.Result{Text: fmt.Sprintf("%s%s is %s; output from byte %d (next: %d):\n%s", note, a.Name, state, chunk.Offset, chunk.Next, chunk.Data), Data: data}, nil
}

// Spec declares developer.stop.
func (t *stopTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name:        Name + ".stop",
		Description: "Stop one of your long-lived processes by name.",
		Schema: json.RawMessage(`{
			"type": "object",
			"properties": {"name": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,31}$"}},
			"required": ["name"],
			"additionalProperties": false
		}`),
		Effects: []plugins.Effect{plugins.EffectExec},
		Tier:    plugins.TierSession,
		Timeout: time.Minute,
	}
}

// TierFor: stopping one's own process needs no card in any mode.
func (t *stopTool) TierFor(context.Context, plugins.Call) plugins.Tier { return plugins.TierAuto }

// Describe renders what is stopped.
func (t *stopTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	var a nameArgs
	if err := decodeArgs(call.Args, &a); err != nil {
		return plugins.Envelope{}, err
	}
	return plugins.Envelope{Summary: "Stop " + a.Name, Effects: []plugins.Effect{plugins.EffectExec}, Preview: "Stop the process " + a.Name}, nil
}

// Execute stops the process through the host and records it.
func (t *stopTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a nameArgs
	if err := decodeArgs(call.Args, &a); err != nil {
		return toolResult(err)
	}
	tag, err := t.p.deps.Pool.Exec(ctx, `UPDATE developer.processes SET stopped_at = now(), state = 'stopped' WHERE agent = $1 AND name = $2 AND stopped_at IS NULL`, call.Agent, a.Name)
	if err != nil {
		return plugins.Result{}, fmt.Errorf("developer: stop %s: %w", a.Name, err)
	}
	if tag.RowsAffected() == 0 {
		return toolResult(refusef("%s has no running process named %q.", call.Agent, a.Name))
	}
	if err := t.p.host.Stop(ctx, call.Agent, a.Name); err != nil {
		return toolResult(refusef("%s was recorded as stopped, but stopping it said: %v", a.Name, err))
	}
	text := "Stopped " + a.Name + "."
	if note := quarantineNote(filepath.Join(t.p.logDir(), call.Agent+"."+a.Name+".log"), 5*time.Second); note != "" {
		text += " " + note
	}
	return plugins.Result{Text: text}, nil
}
