package developer

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"buddi/plugins"
	"buddi/plugins/developer/runlist"
	"buddi/plugins/developer/spawn"
	"buddi/plugins/developer/testmetric"
)

// The bounds of developer.run (§4: "Output bounded (200 KB over both streams together, tail
// kept), exit code, elapsed").
const (
	// defaultRunTimeout bounds a command that names no timeout.
	defaultRunTimeout = 10 * time.Minute
	// maxRunTimeout is the longest timeoutSeconds a call may ask for.
	maxRunTimeout = 30 * time.Minute
	// maxCommandLen bounds the command string.
	maxCommandLen = 8192
)

// runTool is developer.run.
type runTool struct{ p *plugin }

var (
	_ plugins.Tool            = (*runTool)(nil)
	_ plugins.TierNarrower    = (*runTool)(nil)
	_ plugins.PolicyDescriber = (*runTool)(nil)
)

// Spec declares developer.run.
func (t *runTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Name + ".run",
		Description: "Run one command in your workspace and get its output (the last 200 KB of both streams), exit code and time taken. " +
			"There is no shell: the command is split into words and run as a program with arguments, so pipes, redirects, variables and ~ are not available. " +
			"In run mode commands on the run list need no card; everything else asks the owner.",
		Schema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"command":        {"type": "string", "minLength": 1, "maxLength": %d, "description": "The command, e.g. \"go test ./...\"."},
				"cwd":            {"type": "string", "maxLength": 4096, "description": "The directory to run in, relative to the workspace. Default: the workspace."},
				"timeoutSeconds": {"type": "integer", "minimum": 1, "maximum": %d, "description": "Stop the command after this long. Default %d."}
			},
			"required": ["command"],
			"additionalProperties": false
		}`, maxCommandLen, int(maxRunTimeout/time.Second), int(defaultRunTimeout/time.Second))),
		Effects: []plugins.Effect{plugins.EffectExec},
		Tier:    plugins.TierSession,
		// The registry's deadline leaves the command's own timeout room to stop it in order.
		Timeout: maxRunTimeout + time.Minute,
	}
}

// runArgs are developer.run's arguments.
type runArgs struct {
	Command        string `json:"command"`
	Cwd            string `json:"cwd"`
	TimeoutSeconds int    `json:"timeoutSeconds"`
}

// runCall is one call, prepared: arguments, workspace, and the run list's verdict.
type runCall struct {
	args    runArgs
	s       *space
	verdict runlist.Verdict
	box     boxed // the sandbox the command runs in
}

// prepare reads the arguments, the agent's workspace, mode and remembered commands, and asks
// the run list (§5) — all afresh, so a mode change applies to the next call.
func (t *runTool) prepare(ctx context.Context, call plugins.Call) (*runCall, error) {
	c := &runCall{}
	if err := decodeArgs(call.Args, &c.args); err != nil {
		return nil, err
	}
	var err error
	if c.s, err = t.p.space(ctx, call.Agent); err != nil {
		return nil, err
	}
	remembered, err := t.p.store.RememberedFor(ctx, call.Agent, c.s.dir())
	if err != nil {
		return nil, err
	}
	c.verdict = runlist.Decide(runlist.Input{
		Command: c.args.Command, Workspace: c.s.dir(), Cwd: c.args.Cwd, Mode: c.s.mode,
		Agent: call.Agent, Remembered: remembered, FS: runlist.DirFS(c.s.dir()),
		// Every path the workspace's confinement protects: the home's §2 list (with the
		// targets of links among them), buddi's data directory, the vault.
		Protected: c.s.root.Protected(),
		// The cwd and every path the command names, resolved through the confinement: no
		// link on the way, and nothing a formatter writes under .git or a hooks directory.
		Root: c.s.root.WithHooks(t.p.hooksLookup(c.s)),
	})
	if c.verdict.Kind == runlist.Refused {
		return c, refusef("%s", c.verdict.Reason)
	}
	c.box = t.p.box(c.s, false)
	return c, nil
}

// TierFor is the run list's verdict: auto, or gated (a refusal is gated here and refused by
// Describe, so no card exists for it).
func (t *runTool) TierFor(ctx context.Context, call plugins.Call) plugins.Tier {
	c, err := t.prepare(ctx, call)
	if err != nil {
		return tierOf(assessment{}, err)
	}
	if c.verdict.Kind == runlist.Auto {
		return c.box.tier(plugins.TierAuto)
	}
	return plugins.TierGated
}

// PolicyFacts shows the permission policy the command, so the owner's deny rules apply to
// it in every mode.
func (t *runTool) PolicyFacts(plugins.Call) plugins.PolicyFacts {
	return plugins.PolicyFacts{Shell: true}
}

// Describe renders the command, where it runs and the rule that decided.
func (t *runTool) Describe(ctx context.Context, call plugins.Call) (plugins.Envelope, error) {
	c, err := t.prepare(ctx, call)
	if err != nil {
		return plugins.Envelope{}, err
	}
	v := c.verdict
	label := "Rule"
	if v.Kind == runlist.Gated {
		label = "Why a card"
	}
	return plugins.Envelope{
		Summary: fmt.Sprintf("Run `%s` in %s", strings.Join(v.Argv, " "), v.Dir),
		Effects: []plugins.Effect{plugins.EffectExec},
		Targets: []string{v.Dir},
		Detail: map[string]any{
			"command": c.args.Command, "argv": v.Argv, "dir": v.Dir, "verdict": v.Kind.String(),
			"rule": string(v.Rule), "timeout_seconds": int(c.timeout() / time.Second), "sandbox": c.box.detail(),
		},
		Preview: fmt.Sprintf("Run %s\nin %s (no shell; the environment has only PATH, HOME, USER, LANG, LC_ALL, TERM, TMPDIR, SHELL, CI=1 and the box's caches)\n%s: %s\n%s",
			quoteArgv(v.Argv), v.Dir, label, v.Reason, c.box.describe()),
		Choices: c.rememberChoice(),
	}, nil
}

// The card's "remember this, in this workspace" (§3): the choice's name and its options.
const (
	// ChoiceRemember names the choice on a gated command's card.
	ChoiceRemember = "remember in this workspace"
	// RememberNo runs the command once and remembers nothing (the default).
	RememberNo = "no"
	// RememberExactly remembers exactly this argv.
	RememberExactly = "exactly this command"
	// RememberBeginning remembers any command that begins with the program and its subcommand.
	RememberBeginning = "any command beginning so"
)

// rememberChoice is the choice a gated command's card carries: only a plain command in edit
// or run mode (where a remembered command runs without a card; never in ask) can be
// remembered, and "beginning so" needs a program and a subcommand.
func (c *runCall) rememberChoice() []plugins.Choice {
	v := c.verdict
	if v.Kind != runlist.Gated || !v.Plain || len(v.Argv) == 0 || (c.s.mode != runlist.ModeEdit && c.s.mode != runlist.ModeRun) {
		return nil
	}
	opts := []string{RememberNo, RememberExactly}
	if len(v.Argv) >= 2 {
		opts = append(opts, RememberBeginning)
	}
	return []plugins.Choice{{Name: ChoiceRemember, Options: opts, Default: RememberNo}}
}

// remember records the owner's "remember this, in this workspace" from the approved card's
// picks: only when the approved envelope offered the choice, bound to the agent and the
// workspace. It returns a line for the result ("" when nothing was asked).
func (t *runTool) remember(ctx context.Context, call plugins.Call, c *runCall, approved *plugins.Envelope) string {
	if approved == nil {
		return ""
	}
	pick := call.Picks[ChoiceRemember]
	offered := false
	for _, ch := range approved.Choices {
		offered = offered || (ch.Name == ChoiceRemember && slices.Contains(ch.Options, pick))
	}
	if !offered || pick == RememberNo {
		return ""
	}
	r := runlist.Remembered{Agent: call.Agent, Workspace: c.s.dir(), Argv: c.verdict.Argv}
	if pick == RememberBeginning {
		r.Argv, r.Prefix = c.verdict.Argv[:2], true
	}
	if _, err := t.p.store.Remember(ctx, r); err != nil {
		return fmt.Sprintf("(the owner's \"remember\" was not kept: %v)\n", err)
	}
	how := "exactly"
	if r.Prefix {
		how = "and any command beginning so"
	}
	return fmt.Sprintf("(remembered %s %s in this workspace: it runs without a card from now on in edit and run mode)\n", quoteArgv(r.Argv), how)
}

// timeout is the command's bound.
func (c *runCall) timeout() time.Duration {
	if c.args.TimeoutSeconds > 0 {
		return min(time.Duration(c.args.TimeoutSeconds)*time.Second, maxRunTimeout)
	}
	return defaultRunTimeout
}

// ReportsDispatch: Execute calls plugins.Dispatch just before the command starts, so a call
// that never got that far is known not to have run.
func (t *runTool) ReportsDispatch() bool { return true }

// Execute runs the command: decided again (the mode is read on this call), a gated one only
// with an approved envelope, spawned with the environment this plugin builds.
func (t *runTool) Execute(ctx context.Context, call plugins.Call, approved *plugins.Envelope) (plugins.Result, error) {
	c, err := t.prepare(ctx, call)
	if err != nil {
		return toolResult(err)
	}
	if c.verdict.Kind != runlist.Auto && approved == nil {
		return toolResult(refusef(reasonNeedApproval, Name+".run", c.verdict.Reason))
	}
	spec, err := c.box.spec(spawn.Spec{
		Argv: c.verdict.Argv, Dir: c.verdict.Dir, Env: t.p.boxEnv(c.s, c.box), Timeout: c.timeout(),
	}, approved, Name+".run")
	if err != nil {
		return toolResult(err)
	}
	// Nothing has happened yet: from here the command runs, and the ledger says so.
	if err := plugins.Dispatch(ctx); err != nil {
		return toolResult(refusef("%s was not started: %v", c.verdict.Argv[0], err))
	}
	remembered := t.remember(ctx, call, c, approved)
	res, err := spawn.Run(ctx, spec)
	if err != nil {
		return toolResult(refusef("%s could not be started: %v", c.verdict.Argv[0], err))
	}
	if runner, ok := testmetric.Runner(c.verdict.Argv); ok {
		t.p.recordTests(call.Agent, c.s.dir(), lastTests{
			argv: res.Argv, exitCode: res.ExitCode, elapsed: res.Elapsed,
			measure: testmetric.FailingTail(runner, res.Output, res.ExitCode, res.Dropped),
		})
	}
	status := fmt.Sprintf("exit %d", res.ExitCode)
	switch res.Ended {
	case spawn.TimedOut:
		status = fmt.Sprintf("stopped after the %s timeout", c.timeout())
	case spawn.Cancelled:
		status = "stopped: the run was cancelled"
	}
	head := fmt.Sprintf("$ %s\n(in %s; %s after %s", quoteArgv(res.Argv), c.verdict.Dir, status, res.Elapsed.Round(time.Millisecond))
	if res.Dropped > 0 {
		head += fmt.Sprintf("; the first %d bytes of output were dropped, the last %d KB kept", res.Dropped, spawn.MaxOutput>>10)
	}
	head += ")\n" + remembered
	// What the command left that git outside the box would obey was moved aside: the model
	// and the owner read it first.
	if note := res.Quarantine.String(); note != "" {
		head += note + "\n"
	}
	data, _ := json.Marshal(map[string]any{
		"argv": res.Argv, "dir": c.verdict.Dir, "exit_code": res.ExitCode, "elapsed_ms": res.Elapsed.Milliseconds(),
		"ended": res.Ended, "dropped": res.Dropped, "quarantined": res.Quarantine.Quarantined,
	})
	return plugins.Result{Text: head + res.Output, Data: data, IsError: res.ExitCode != 0 || res.Ended != spawn.Exited}, nil
}

// quoteArgv shows an argv so each word's edges are visible.
func quoteArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\"'") {
			out[i] = fmt.Sprintf("%q", a)
		} else {
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}

// ownerEnvironment is the owner's environment the plugin captures once, at start: only the
// names spawn keeps survive into a command.
func ownerEnvironment() spawn.Owner { return spawn.Capture(os.Environ()) }

// lastTests is the last test run recorded for an agent's workspace (§11: the failing_tests
// metric reads it; a restart loses it, and then the metric is not measurable).
type lastTests struct {
	workspace string
	argv      []string
	exitCode  int
	elapsed   time.Duration
	measure   testmetric.Measure
	at        time.Time
}

// recordTests keeps run as the agent's last test run in workspace.
func (p *plugin) recordTests(agent, workspace string, run lastTests) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tests == nil {
		p.tests = map[string]lastTests{}
	}
	run.workspace, run.at = workspace, p.deps.Now()
	p.tests[agent] = run
}

// lastTestRun returns agent's last test run in workspace, if one is recorded.
func (p *plugin) lastTestRun(agent, workspace string) (lastTests, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	last, ok := p.tests[agent]
	return last, ok && last.workspace == workspace
}
