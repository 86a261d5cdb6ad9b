package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"buddi/core/executor"
	"buddi/core/permission"
	"buddi/core/registry"
	"buddi/core/seal"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/queue"
	"buddi/runtime/run"
	"buddi/surfaces/telegram"
)

// fetchTool is a tool that only reads from the network, as an installed plugin's could.
type fetchTool struct {
	name string
	runs int
}

func (f *fetchTool) Spec() plugins.Spec {
	return plugins.Spec{Name: f.name, Description: "Fetch a page.", Tier: plugins.TierAuto,
		Effects: []plugins.Effect{plugins.EffectNetRead},
		Schema:  json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}},"additionalProperties":false}`)}
}

func (*fetchTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	return plugins.Envelope{Summary: "fetch " + string(call.Args)}, nil
}

func (f *fetchTool) Execute(context.Context, plugins.Call, *plugins.Envelope) (plugins.Result, error) {
	f.runs++
	return plugins.Result{Text: "fetched"}, nil
}

// modesRig is an executor over the tools compiled into buddi (and one network reader),
// judged by the owner's policy with the agents' modes read from the database.
type modesRig struct {
	exec  *executor.Executor
	modes *executor.Modes
	home  string
	fetch *fetchTool
	// status reaches the host its manifest's network line names.
	status *fetchTool
}

func newModesRig(t *testing.T) modesRig {
	t.Helper()
	pool := pgtest.Pool(t)
	home := t.TempDir()
	key, err := seal.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	fetch, status := &fetchTool{name: "net.fetch"}, &fetchTool{name: "status.check"}
	reg, err := registry.New(append(Manifests(pool, home, nil),
		plugins.Manifest{Name: "net", Version: "1", Tools: []plugins.Tool{fetch}},
		// A plugin that reaches one host, named by its manifest's network line, with no url argument.
		plugins.Manifest{Name: "status", Version: "1", Tools: []plugins.Tool{status}, Network: []string{"status.example.com: the service's name"}})...)
	if err != nil {
		t.Fatal(err)
	}
	insert, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	exec := executor.New(pool, reg, run.JobQueue{Inserter: insert}, nil)
	exec.Seal = key
	modes := executor.NewModes(pool, key)
	exec.Policy = ownerPolicy(home, nil, modes)
	return modesRig{exec: exec, modes: modes, home: home, fetch: fetch, status: status}
}

func (r modesRig) setMode(t *testing.T, mode permission.Mode) {
	t.Helper()
	if _, err := r.modes.SetMode(context.Background(), "dev", mode, "owner:terminal"); err != nil {
		t.Fatal(err)
	}
}

// propose proposes tool with args as @dev's, from a run on surface.
func (r modesRig) propose(t *testing.T, surface, tool, args string) executor.Proposed {
	t.Helper()
	call := plugins.Call{Tool: tool, Args: json.RawMessage(args), Agent: "dev", RunID: "run-" + surface, CallID: tool + args,
		Granted: true, Surface: surface, Remote: run.Remote(surface)}
	p, err := r.exec.Propose(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	execArgs   = `{"language":"bash","script":"echo hi"}`
	cancelArgs = `{"mission_id":999}` // schedule.cancel_mine: state_write, auto; runs and finds nothing
)

// ran reports whether the call ran at once; gated whether it became a pending action.
func ran(p executor.Proposed) bool { return p.Refusal == "" && p.Result != nil }
func gated(p executor.Proposed) bool {
	return p.Refusal == "" && p.Action != nil && p.Tier == plugins.TierGated
}

// Seed 002's table over buddi's own tools, in each mode the owner sets for @dev.
func TestAgentModeDecidesEveryCall(t *testing.T) {
	t.Parallel()
	r := newModesRig(t)

	// Never set: auto, the tools' own tiers decide.
	if m, err := r.modes.Mode(context.Background(), "dev"); err != nil || m.Mode != permission.ModeAuto || m.Set {
		t.Fatalf("the default mode: %+v, %v; want auto, not set", m, err)
	}
	if p := r.propose(t, "dashboard", "schedule.cancel_mine", cancelArgs); !ran(p) {
		t.Errorf("auto: a state_write call: %+v, want it run", p)
	}
	if p := r.propose(t, "dashboard", "host.exec", execArgs); !gated(p) {
		t.Errorf("auto: host.exec (gated): %+v, want a card", p)
	}

	r.setMode(t, permission.ModePlan)
	p := r.propose(t, "dashboard", "host.exec", execArgs+" ")
	if p.Refusal == "" || p.Action != nil {
		t.Fatalf("plan: host.exec: %+v, want a refusal", p)
	}
	for _, want := range []string{"plan mode", "dev is in plan mode", "buddi agents mode dev", "Settings → Agents"} {
		if !strings.Contains(p.Refusal, want) {
			t.Errorf("plan's refusal %q does not say %q", p.Refusal, want)
		}
	}
	if strings.Count(strings.TrimSuffix(p.Refusal, "."), ". ") != 0 {
		t.Errorf("plan's refusal is not one sentence: %q", p.Refusal)
	}
	if p := r.propose(t, "dashboard", "schedule.cancel_mine", cancelArgs); p.Refusal == "" {
		t.Errorf("plan: a state_write call: %+v, want a refusal", p)
	}
	if p := r.propose(t, "dashboard", "schedule.list_mine", `{}`); !ran(p) {
		t.Errorf("plan: a read: %+v, want it run", p)
	}

	// Changed between two calls of the same run: the next call sees it.
	r.setMode(t, permission.ModeAcceptEdits)
	if p := r.propose(t, "dashboard", "schedule.cancel_mine", `{"mission_id":998}`); !ran(p) {
		t.Errorf("accept-edits: a state_write call: %+v, want it run", p)
	}
	if p := r.propose(t, "dashboard", "host.exec", `{"language":"bash","script":"echo two"}`); !gated(p) {
		t.Errorf("accept-edits: host.exec: %+v, want a card", p)
	}

	r.setMode(t, permission.ModeAuto)
	if p := r.propose(t, "dashboard", "schedule.cancel_mine", `{"mission_id":997}`); !ran(p) {
		t.Errorf("auto again: %+v, want it run", p)
	}
}

// A run from Telegram or buddi mcp is clamped to seed 002's remote ceiling (accept-edits by
// default), whatever the agent's own mode; settings.json's remote_max_mode moves it.
func TestRemoteSurfacesAreClamped(t *testing.T) {
	t.Parallel()
	r := newModesRig(t)
	r.setMode(t, permission.ModeAuto)
	// Auto mode, on the owner's own dashboard: net.fetch (auto) runs.
	if p := r.propose(t, "dashboard", "net.fetch", `{"url":"https://example.com/"}`); !ran(p) {
		t.Fatalf("dashboard: %+v, want it run", p)
	}
	// An auto-tier call with an exec effect: developer tools are session-tier, so take the
	// policy's answer straight from the owner's policy for a Telegram call.
	policy := ownerPolicy(r.home, nil, r.modes)
	exec := permission.Call{Tool: "developer.run", Effects: []permission.Effect{permission.EffectExec}}
	for _, surface := range []string{telegram.Surface, "mcp"} {
		agent, s, err := policy(context.Background(), plugins.Call{Agent: "dev", Surface: surface, Remote: run.Remote(surface)})
		if err != nil {
			t.Fatal(err)
		}
		if agent.ExecutionMode != permission.ModeAcceptEdits {
			t.Errorf("%s: auto requested, clamped to %q; want accept-edits", surface, agent.ExecutionMode)
		}
		if d := permission.Evaluate(exec, agent, s); d.Verdict != permission.VerdictPrompt {
			t.Errorf("%s: an exec call: %v, want it asked first", surface, d)
		}
	}
	agent, _, err := policy(context.Background(), plugins.Call{Agent: "dev", Surface: "dashboard"})
	if err != nil || agent.ExecutionMode != permission.ModeAuto {
		t.Errorf("dashboard: %q, %v; want auto", agent.ExecutionMode, err)
	}

	// Through the executor: host.exec from Telegram is a card as it is anywhere, and with
	// remote_max_mode plan it is refused, saying why.
	if err := os.WriteFile(filepath.Join(r.home, "settings.json"), []byte(`{"remote_default_mode":"plan"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p := r.propose(t, telegram.Surface, "host.exec", execArgs)
	if p.Refusal == "" || !strings.Contains(p.Refusal, "calls from Telegram run at most in plan mode") {
		t.Errorf("telegram with a plan ceiling: %+v, want a refusal naming the ceiling", p)
	}
	if p := r.propose(t, "dashboard", "host.exec", execArgs); !gated(p) {
		t.Errorf("the dashboard is not clamped: %+v, want a card", p)
	}
	// A lower mode of the agent's own stays: the clamp never raises.
	r.setMode(t, permission.ModePlan)
	if err := os.WriteFile(filepath.Join(r.home, "settings.json"), []byte(`{"remote_max_mode":"auto"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if agent, _, _ := policy(context.Background(), plugins.Call{Agent: "dev", Surface: telegram.Surface}); agent.ExecutionMode != permission.ModePlan {
		t.Errorf("plan agent from Telegram: %q, want plan", agent.ExecutionMode)
	}
}

// settings.json's network policy refuses a tool with a network effect in every mode.
func TestNetworkPolicyRefusesNetworkTools(t *testing.T) {
	t.Parallel()
	r := newModesRig(t)
	if err := os.WriteFile(filepath.Join(r.home, "settings.json"), []byte(`{"network":"deny"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p := r.propose(t, "dashboard", "net.fetch", `{"url":"https://example.com/"}`)
	if p.Refusal == "" || !strings.Contains(p.Refusal, "network policy is deny") || r.fetch.runs != 0 {
		t.Errorf("network deny: %+v (ran %d), want a refusal", p, r.fetch.runs)
	}
	if p := r.propose(t, "dashboard", "host.exec", execArgs); p.Refusal == "" {
		t.Errorf("network deny: host.exec (net_read, net_write): %+v, want a refusal", p)
	}
	if err := os.WriteFile(filepath.Join(r.home, "settings.json"), []byte(`{"network":"allowlist","networkAllowHosts":["example.com"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if p := r.propose(t, "dashboard", "net.fetch", `{"url":"https://api.example.com/x"}`); !ran(p) {
		t.Errorf("allowlisted host: %+v, want it run", p)
	}
	if p := r.propose(t, "dashboard", "net.fetch", `{"url":"https://example.org/"}`); p.Refusal == "" {
		t.Errorf("host off the allowlist: %+v, want a refusal", p)
	}
	// The manifest's network line names the host a call without a url reaches.
	if p := r.propose(t, "dashboard", "status.check", `{}`); !ran(p) {
		t.Errorf("a declared host inside the allowlist: %+v, want it run", p)
	}
	if err := os.WriteFile(filepath.Join(r.home, "settings.json"), []byte(`{"network":"allowlist","networkAllowHosts":["api.example.com"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if p := r.propose(t, "dashboard", "status.check", `{"url":"https://api.example.com/"}`); p.Refusal == "" || !strings.Contains(p.Refusal, "status.example.com") {
		t.Errorf("a declared host off the allowlist: %+v, want a refusal naming it", p)
	}
	if r.status.runs != 1 {
		t.Errorf("status.check ran %d times, want 1", r.status.runs)
	}
}

// A mode row buddi did not seal is read as plan, and says why.
func TestForgedModeIsPlan(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	key, _ := seal.New(bytes.Repeat([]byte{7}, 32))
	modes := executor.NewModes(pool, key)
	ctx := context.Background()
	if _, err := modes.SetMode(ctx, "dev", permission.ModePlan, "owner:terminal"); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE core.agent_modes SET mode = 'auto' WHERE agent = 'dev'`); err != nil {
		t.Fatal(err)
	}
	m, err := modes.Mode(ctx, "dev")
	if err != nil || m.Mode != permission.ModePlan || m.Refused == "" {
		t.Errorf("a forged auto: %+v, %v; want plan, refused", m, err)
	}
	if _, err := modes.SetMode(ctx, "dev", "root", "owner:terminal"); err == nil {
		t.Error("an unknown mode was set")
	}
	if _, err := executor.NewModes(pool, seal.Key{}).SetMode(ctx, "dev", permission.ModeAuto, "owner:terminal"); err == nil {
		t.Error("a mode was set without the seal key")
	}
}
