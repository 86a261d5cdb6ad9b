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

	"buddi/plugins"
	"buddi/plugins/developer/runlist"
	"buddi/plugins/developer/spawn"
)

// MaxProcesses is how many long-lived processes one agent may run at once (§4).
const MaxProcesses = 4

// Proc is a started process as the host supervises it (spawn.Process is one).
type Proc interface {
	// Done is closed once the process has exited.
	Done() <-chan struct{}
	// Stop ends the process and its group, killing it after grace.
	Stop(grace time.Duration) error
}

// ProcessHost supervises long-lived processes: buddi serve's is the actor tree (a
// supervisor per workspace, an actor per process), so buddi's stop stops them.
type ProcessHost interface {
	// Adopt supervises p as name in agent's workspace.
	Adopt(ctx context.Context, agent, name string, p Proc) error
	// Stop stops agent's process name.
	Stop(ctx context.Context, agent, name string) error
	// StopAll stops every process of agent (its workspace changed, or it was removed).
	StopAll(ctx context.Context, agent string) error
}

// localHost is the ProcessHost of a plugin given none (tests, the CLI): processes are held
// here and stopped by Stop and StopAll, with no supervision tree around them.
type localHost struct {
	mu    sync.Mutex
	procs map[string]map[string]Proc
}

// Adopt keeps p.
func (h *localHost) Adopt(_ context.Context, agent, name string, p Proc) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.procs == nil {
		h.procs = map[string]map[string]Proc{}
	}
	if h.procs[agent] == nil {
		h.procs[agent] = map[string]Proc{}
	}
	h.procs[agent][name] = p
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
	spec, err := c.box.spec(spawn.Spec{Argv: c.verdict.Argv, Dir: c.verdict.Dir, Env: t.p.boxEnv(c.s, c.box)}, approved, Name+".start")
	if err != nil {
		return toolResult(err)
	}
	proc, err := spawn.Start(spec, logPath)
	if err != nil {
		return toolResult(refusef("%s could not be started: %v", c.verdict.Argv[0], err))
	}
	startedProcs.Store(logPath, proc)
	id := proc.Identity()
	argv, _ := json.Marshal(c.verdict.Argv)
	var port *int
	if a.Port > 0 {
		port = &a.Port
	}
	started := t.p.deps.Now().UTC().Truncate(time.Microsecond)
	sum, err := t.p.store.sealProcess(call.Agent, a.Name, id, c.verdict.Argv, c.verdict.Dir, port, logPath, started)
	if err != nil {
		_ = proc.Stop(time.Second)
		return plugins.Result{}, err
	}
	if _, err := t.p.deps.Pool.Exec(ctx, `
		INSERT INTO developer.processes (agent, name, pid, start_time, boot, argv, cwd, port, log_path, started_at, seal)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		call.Agent, a.Name, id.Pid, int64(id.StartTime), id.Boot, string(argv), c.verdict.Dir, port, logPath, started, sum); err != nil {
		_ = proc.Stop(time.Second)
		return plugins.Result{}, fmt.Errorf("developer: record process %s: %w", a.Name, err)
	}
	if err := t.p.host.Adopt(ctx, call.Agent, a.Name, proc); err != nil {
		_ = proc.Stop(time.Second)
		_, _ = t.p.deps.Pool.Exec(context.WithoutCancel(ctx), `UPDATE developer.processes SET stopped_at = now() WHERE agent = $1 AND name = $2 AND stopped_at IS NULL`, call.Agent, a.Name)
		return plugins.Result{}, err
	}
	return plugins.Result{Text: fmt.Sprintf("Started %s (pid %d): %s in %s. Read its output with developer.output {\"name\":%q}.", a.Name, id.Pid, quoteArgv(c.verdict.Argv), c.verdict.Dir, a.Name)}, nil
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

// sweepExited marks rows whose process is no longer the one recorded (it exited, or the
// machine rebooted and the pid is someone else's) as stopped.
func (p *plugin) sweepExited(ctx context.Context) error {
	rows, err := p.deps.Pool.Query(ctx, `SELECT id, pid, start_time, boot FROM developer.processes WHERE stopped_at IS NULL`)
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
			if _, err := p.deps.Pool.Exec(ctx, `UPDATE developer.processes SET stopped_at = now() WHERE id = $1`, x.id); err != nil {
				return fmt.Errorf("developer: mark process %d stopped: %w", x.id, err)
			}
		}
	}
	return nil
}

// stopAllProcesses stops every process of agent and records them stopped.
func (p *plugin) stopAllProcesses(ctx context.Context, agent string) error {
	if _, err := p.deps.Pool.Exec(ctx, `UPDATE developer.processes SET stopped_at = now() WHERE agent = $1 AND stopped_at IS NULL`, agent); err != nil {
		return fmt.Errorf("developer: stop %s's processes: %w", agent, err)
	}
	return p.host.StopAll(ctx, agent)
}

// lastProcess finds agent's latest process named name.
func (p *plugin) lastProcess(ctx context.Context, agent, name string) (logPath string, ident spawn.Identity, err error) {
	var st int64
	err = p.deps.Pool.QueryRow(ctx, `
		SELECT log_path, pid, start_time, boot FROM developer.processes
		WHERE agent = $1 AND name = $2 ORDER BY id DESC LIMIT 1`, agent, name).Scan(&logPath, &ident.Pid, &st, &ident.Boot)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ident, refusef("%s has no process named %q.", agent, name)
	}
	ident.StartTime = uint64(st)
	// The log is where developer.start writes it, whatever the row says: a path written into
	// the table would read the owner's files back to the model.
	if want := filepath.Join(p.logDir(), agent+"."+name+".log"); err == nil && logPath != want {
		why := fmt.Sprintf("its log path %s is not where buddi writes the process's log", logPath)
		p.store.refuse(ctx, "process", agent+"/"+name, why, "stop it on Settings → Developer; nothing was read")
		return "", ident, refusef("The record of process %q is not one buddi wrote (%s); nothing was read.", name, why)
	}
	return logPath, ident, err
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
	logPath, ident, err := t.p.lastProcess(ctx, call.Agent, a.Name)
	if err != nil {
		return toolResult(err)
	}
	chunk, err := spawn.Tail(logPath, a.Since, 64<<10)
	if err != nil {
		return toolResult(refusef("The output of %s cannot be read: %v", a.Name, err))
	}
	state, note := "running", ""
	if !spawn.Alive(ident) {
		state = "exited"
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
	tag, err := t.p.deps.Pool.Exec(ctx, `UPDATE developer.processes SET stopped_at = now() WHERE agent = $1 AND name = $2 AND stopped_at IS NULL`, call.Agent, a.Name)
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
