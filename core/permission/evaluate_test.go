package permission

import (
	"os"
	"path/filepath"
	"testing"
)

// testBundle is a workspace on the real filesystem: a root the agent works in, a
// directory outside it, and a link inside the workspace that points outside.
type testBundle struct {
	workspace string
	outside   string
	escape    string // workspace/escape -> outside
}

func setup(t *testing.T) testBundle {
	t.Helper()
	base := t.TempDir()
	b := testBundle{
		workspace: filepath.Join(base, "ws"),
		outside:   filepath.Join(base, "elsewhere"),
	}
	for _, d := range []string{b.workspace, b.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b.escape = filepath.Join(b.workspace, "escape")
	if err := os.Symlink(b.outside, b.escape); err != nil {
		t.Fatal(err)
	}
	return b
}

// agentIn is an agent in mode m working in the bundle's workspace.
func (b testBundle) agentIn(m Mode) Agent {
	return Agent{ExecutionMode: m, WorkspacePaths: []string{b.workspace}}
}

var modes = []Mode{ModePlan, ModeAcceptEdits, ModeAuto}

// want is an expected verdict and block kind.
type want struct {
	verdict Verdict
	kind    BlockKind
}

var (
	wAllow   = want{VerdictAllow, BlockNone}
	wMode    = want{VerdictBlock, BlockMode}
	wNet     = want{VerdictBlock, BlockNetwork}
	wDeny    = want{VerdictBlock, BlockDeny}
	wWS      = want{VerdictBlock, BlockWorkspace}
	wAskTool = want{VerdictPrompt, BlockNotAllowedByDefault}
	wAskCmd  = want{VerdictPrompt, BlockCommandNotAllowed}
)

func checkDecision(t *testing.T, got Decision, w want) {
	t.Helper()
	if got.Verdict != w.verdict || got.Block != w.kind {
		t.Errorf("got %v (%v), want %v (%v); reason: %s", got.Verdict, got.Block, w.verdict, w.kind, got.Reason)
	}
	if got.Reason == "" {
		t.Errorf("got an empty reason for %v", got)
	}
	if got.Verdict == VerdictPrompt && got.Risk == "" {
		t.Errorf("got a prompt without a risk: %v", got)
	}
}

// TestEvaluateTable covers every cell of seed 002's decision table.
func TestEvaluateTable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inside := filepath.Join(b.workspace, "main.go")
	def := Merge()
	noPlanNet := Merge(Layer{NetworkInPlanMode: ptr(false)})

	tests := []struct {
		name     string
		call     Call
		settings Settings
		want     [3]want // plan, accept-edits, auto
	}{
		// Row 1: only read.
		{"only read", Call{Tool: "read", Effects: []Effect{EffectRead}}, def, [3]want{wAllow, wAllow, wAllow}},
		{"only read, repeated", Call{Tool: "grep", Effects: []Effect{EffectRead, EffectRead}}, def, [3]want{wAllow, wAllow, wAllow}},
		{"only read, inside the workspace", Call{Tool: "ls", Effects: []Effect{EffectRead}, Paths: []string{b.workspace}}, def, [3]want{wAllow, wAllow, wAllow}},
		// Row 2: net_read, with read.
		{"net_read", Call{Tool: "web.fetch", Effects: []Effect{EffectNetRead}}, def, [3]want{wAllow, wAllow, wAllow}},
		{"net_read with read", Call{Tool: "web.fetch", Effects: []Effect{EffectRead, EffectNetRead}}, def, [3]want{wAllow, wAllow, wAllow}},
		{"net_read, network_in_plan_mode false", Call{Tool: "web.fetch", Effects: []Effect{EffectRead, EffectNetRead}}, noPlanNet, [3]want{wNet, wAllow, wAllow}},
		{"only read, network_in_plan_mode false", Call{Tool: "read", Effects: []Effect{EffectRead}}, noPlanNet, [3]want{wAllow, wAllow, wAllow}},
		// Row 3: state_write, with read and net_read.
		{"state_write", Call{Tool: "memory.save", Effects: []Effect{EffectStateWrite}}, def, [3]want{wMode, wAllow, wAllow}},
		{"state_write with read", Call{Tool: "memory.save", Effects: []Effect{EffectRead, EffectStateWrite}}, def, [3]want{wMode, wAllow, wAllow}},
		{"state_write with read and net_read", Call{Tool: "goals.sync", Effects: []Effect{EffectRead, EffectNetRead, EffectStateWrite}}, def, [3]want{wMode, wAllow, wAllow}},
		{"state_write with net_read, network_in_plan_mode false", Call{Tool: "goals.sync", Effects: []Effect{EffectNetRead, EffectStateWrite}}, noPlanNet, [3]want{wMode, wAllow, wAllow}},
		// Row 4: fs_write, exec, net_write, or no declared effects.
		{"fs_write", Call{Tool: "files.put", Effects: []Effect{EffectFSWrite}}, def, [3]want{wMode, wAskTool, wAllow}},
		{"fs_write with read", Call{Tool: "files.put", Effects: []Effect{EffectRead, EffectFSWrite}}, def, [3]want{wMode, wAskTool, wAllow}},
		{"exec", Call{Tool: "host.exec", Effects: []Effect{EffectExec}}, def, [3]want{wMode, wAskTool, wAllow}},
		{"net_write", Call{Tool: "email.send", Effects: []Effect{EffectNetWrite}}, def, [3]want{wMode, wAskTool, wAllow}},
		{"net_write with everything else", Call{Tool: "x", Effects: []Effect{EffectRead, EffectNetRead, EffectStateWrite, EffectNetWrite}}, def, [3]want{wMode, wAskTool, wAllow}},
		{"no declared effects (an MCP tool)", Call{Tool: "mcp.github.create_issue"}, def, [3]want{wMode, wAskTool, wAllow}},
		{"empty effect list", Call{Tool: "x", Effects: []Effect{}}, def, [3]want{wMode, wAskTool, wAllow}},
		{"unknown effect", Call{Tool: "x", Effects: []Effect{EffectRead, "delete"}}, def, [3]want{wMode, wAskTool, wAllow}},
		// Row 4's exceptions: the write and edit tools, and allowed shell commands.
		{"edit tool inside the workspace", Call{Tool: "edit", Edit: true, Effects: []Effect{EffectRead, EffectFSWrite}, Paths: []string{inside}}, def, [3]want{wMode, wAllow, wAllow}},
		{"write tool creating a new file inside", Call{Tool: "write", Edit: true, Paths: []string{filepath.Join(b.workspace, "new", "dir", "f.txt")}}, def, [3]want{wMode, wAllow, wAllow}},
		{"edit tool without paths", Call{Tool: "edit", Edit: true}, def, [3]want{wMode, wAskTool, wAllow}},
		{"edit tool that also runs a program", Call{Tool: "edit", Edit: true, Effects: []Effect{EffectExec}, Paths: []string{inside}}, def, [3]want{wMode, wAskTool, wAllow}},
		{"edit tool that also sends", Call{Tool: "edit", Edit: true, Effects: []Effect{EffectNetWrite}, Paths: []string{inside}}, def, [3]want{wMode, wAskTool, wAllow}},
		{"edit tool declared read only is still an edit", Call{Tool: "edit", Edit: true, Effects: []Effect{EffectRead}, Paths: []string{inside}}, def, [3]want{wMode, wAllow, wAllow}},
		{"edit tool outside, confinement lifted", Call{Tool: "edit", Edit: true, Paths: []string{filepath.Join(b.outside, "f")}}, Merge(Layer{AllowNonWorkspaceAccess: ptr(true)}), [3]want{wMode, wAskTool, wAllow}},
		{"edit tool through a link that leaves, confinement lifted", Call{Tool: "edit", Edit: true, Paths: []string{filepath.Join(b.escape, "f")}}, Merge(Layer{AllowNonWorkspaceAccess: ptr(true)}), [3]want{wMode, wAskTool, wAllow}},
		{"shell command in permissions.allow", shell("git status"), Merge(Layer{Permissions: Rules{Allow: []string{"command(git status)"}}}), [3]want{wMode, wAllow, wAllow}},
		{"shell command by prefix rule", shell("head -n 20 file.txt"), Merge(Layer{Permissions: Rules{Allow: []string{"command(head)"}}}), [3]want{wMode, wAllow, wAllow}},
		{"shell command not in permissions.allow", shell("npm install"), Merge(Layer{Permissions: Rules{Allow: []string{"command(git status)"}}}), [3]want{wMode, wAskCmd, wAllow}},
		{"shell command with no allow list", shell("ls"), def, [3]want{wMode, wAskCmd, wAllow}},
		{"compound command behind an allowed prefix", shell("git status && curl evil.sh"), Merge(Layer{Permissions: Rules{Allow: []string{"command(git status)"}}}), [3]want{wMode, wAskCmd, wAllow}},
		{"expansion behind an allowed prefix", shell("git status $(id)"), Merge(Layer{Permissions: Rules{Allow: []string{"command(git status)"}}}), [3]want{wMode, wAskCmd, wAllow}},
		{"shell command that is not a string", Call{Tool: "bash", Shell: true, Args: map[string]any{"command": []any{"ls"}}}, Merge(Layer{Permissions: Rules{Allow: []string{"command(ls)"}}}), [3]want{wMode, wAskCmd, wAllow}},
		{"shell tool without a command", Call{Tool: "bash", Shell: true}, def, [3]want{wMode, wAskCmd, wAllow}},
		{"shell tool declared read only is still a shell", Call{Tool: "bash", Shell: true, Effects: []Effect{EffectRead}, Args: map[string]any{"command": "rm x"}}, def, [3]want{wMode, wAskCmd, wAllow}},
		{"bad allow rule allows nothing", shell("git status"), Merge(Layer{Permissions: Rules{Allow: []string{"command(git status"}}}), [3]want{wMode, wAskCmd, wAllow}},
	}
	for _, tt := range tests {
		for i, m := range modes {
			t.Run(tt.name+"/"+string(m), func(t *testing.T) {
				checkDecision(t, Evaluate(tt.call, b.agentIn(m), tt.settings), tt.want[i])
			})
		}
	}
}

func shell(cmd string) Call {
	return Call{Tool: "bash", Shell: true, Effects: []Effect{EffectExec}, Args: map[string]any{"command": cmd}}
}

func ptr[T any](v T) *T { return &v }

// TestEvaluatePolicyBlocks covers the blocks that apply in every mode: permissions.deny,
// the workspace boundary and the network policy.
func TestEvaluatePolicyBlocks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	deny := func(rules ...string) Settings {
		return Merge(Layer{Permissions: Rules{Deny: rules, Allow: []string{"command(rm)", "command(git)", "command(ls)"}}})
	}
	net := func(p NetworkPolicy, hosts ...string) Settings {
		return Merge(Layer{Network: &p, NetworkAllowHosts: hosts})
	}
	fetch := func(url any) Call {
		return Call{Tool: "web.fetch", Effects: []Effect{EffectRead, EffectNetRead}, Args: map[string]any{"url": url}}
	}
	send := func(url any) Call {
		return Call{Tool: "http.post", Effects: []Effect{EffectNetWrite}, Args: map[string]any{"url": url}}
	}
	read := func(p string) Call {
		return Call{Tool: "read", Effects: []Effect{EffectRead}, Paths: []string{p}}
	}

	tests := []struct {
		name     string
		call     Call
		settings Settings
		want     [3]want // plan, accept-edits, auto
	}{
		// permissions.deny: every mode, even where permissions.allow matches.
		{"deny exact", shell("rm -rf /tmp/x"), deny("command(rm -rf)"), [3]want{wDeny, wDeny, wDeny}},
		{"deny prefix", shell("git push --force origin main"), deny("command(git push)"), [3]want{wDeny, wDeny, wDeny}},
		{"deny after a separator", shell("ls; rm -rf /"), deny("command(rm)"), [3]want{wDeny, wDeny, wDeny}},
		{"deny in a pipeline", shell("ls | xargs rm"), deny("command(rm)"), [3]want{wDeny, wDeny, wDeny}},
		{"deny through sudo", shell("sudo -u root rm -rf /"), deny("command(rm)"), [3]want{wDeny, wDeny, wDeny}},
		{"deny through sh -c", shell("sh -c 'rm -rf /'"), deny("command(rm)"), [3]want{wDeny, wDeny, wDeny}},
		{"deny by absolute program path", shell("/bin/rm -rf /"), deny("command(rm)"), [3]want{wDeny, wDeny, wDeny}},
		{"deny in a command substitution", shell("echo $(rm -rf /)"), deny("command(rm)"), [3]want{wDeny, wDeny, wDeny}},
		{"deny with quotes spliced", shell(`r'm' -rf /`), deny("command(rm)"), [3]want{wDeny, wDeny, wDeny}},
		{"deny cannot be checked", shell("$CMD -rf /"), deny("command(rm)"), [3]want{wDeny, wDeny, wDeny}},
		{"deny rule that cannot be read", shell("ls"), deny("command(rm *)"), [3]want{wDeny, wDeny, wDeny}},
		{"deny with a command that is not a string", Call{Tool: "bash", Shell: true, Args: map[string]any{"command": 7}}, deny("command(rm)"), [3]want{wDeny, wDeny, wDeny}},
		{"deny does not match another program", shell("ls -la"), deny("command(rm)"), [3]want{wMode, wAllow, wAllow}},
		{"deny does not match a word of an argument", shell("git rm notes.txt"), deny("command(rm)"), [3]want{wMode, wAllow, wAllow}},
		{"deny leaves an expansion in an argument", shell("ls $HOME"), deny("command(rm)"), [3]want{wMode, wAskCmd, wAllow}},
		{"deny does not touch tools that are not shells", Call{Tool: "files.rm", Effects: []Effect{EffectFSWrite}, Args: map[string]any{"command": "rm -rf /"}}, deny("command(rm)"), [3]want{wMode, wAskTool, wAllow}},
		// The workspace boundary: every mode, reads included.
		{"read outside the workspace", read(filepath.Join(b.outside, "secret")), Merge(), [3]want{wWS, wWS, wWS}},
		{"read through a link that leaves", read(filepath.Join(b.escape, "secret")), Merge(), [3]want{wWS, wWS, wWS}},
		{"read climbing out with ..", read(filepath.Join(b.workspace, "..", "elsewhere", "secret")), Merge(), [3]want{wWS, wWS, wWS}},
		{"read of a relative path", read("main.go"), Merge(), [3]want{wWS, wWS, wWS}},
		{"read inside a trusted workspace", read(filepath.Join(b.outside, "notes")), Merge(Layer{TrustedWorkspaces: []string{b.outside}}), [3]want{wAllow, wAllow, wAllow}},
		{"read outside, confinement lifted", read(filepath.Join(b.outside, "secret")), Merge(Layer{AllowNonWorkspaceAccess: ptr(true)}), [3]want{wAllow, wAllow, wAllow}},
		{"edit outside the workspace", Call{Tool: "write", Edit: true, Paths: []string{filepath.Join(b.outside, "f")}}, Merge(), [3]want{wWS, wWS, wWS}},
		{"one path of two outside", Call{Tool: "mv", Effects: []Effect{EffectFSWrite}, Paths: []string{filepath.Join(b.workspace, "a"), filepath.Join(b.outside, "b")}}, Merge(), [3]want{wWS, wWS, wWS}},
		// The network policy: every mode.
		{"deny refuses net_read", fetch("https://example.com/"), net(NetworkDeny), [3]want{wNet, wNet, wNet}},
		{"deny refuses net_write", send("https://example.com/"), net(NetworkDeny), [3]want{wNet, wNet, wNet}},
		{"deny leaves other tools", Call{Tool: "read", Effects: []Effect{EffectRead}}, net(NetworkDeny), [3]want{wAllow, wAllow, wAllow}},
		{"an unknown policy is deny", fetch("https://example.com/"), net("open"), [3]want{wNet, wNet, wNet}},
		{"allowlist admits the host", fetch("https://example.com/a"), net(NetworkAllowlist, "example.com"), [3]want{wAllow, wAllow, wAllow}},
		{"allowlist admits a subdomain", fetch("https://api.example.com/a"), net(NetworkAllowlist, "example.com"), [3]want{wAllow, wAllow, wAllow}},
		{"allowlist refuses a look-alike", fetch("https://evil-example.com/"), net(NetworkAllowlist, "example.com"), [3]want{wNet, wNet, wNet}},
		{"allowlist refuses another host", send("https://evil.com/"), net(NetworkAllowlist, "example.com"), [3]want{wNet, wNet, wNet}},
		{"allowlist refuses a call without a url", Call{Tool: "web.search", Effects: []Effect{EffectNetRead}}, net(NetworkAllowlist, "example.com"), [3]want{wNet, wNet, wNet}},
		{"allowlist refuses a url that is not a string", fetch(42), net(NetworkAllowlist, "example.com"), [3]want{wNet, wNet, wNet}},
		{"allowlist refuses a url it cannot read", fetch(`https://evil.com\@example.com/`), net(NetworkAllowlist, "example.com"), [3]want{wNet, wNet, wNet}},
		{"allowlist refuses with an empty list", fetch("https://example.com/"), net(NetworkAllowlist), [3]want{wNet, wNet, wNet}},
		{"allowlist then the mode: net_write", send("https://example.com/"), net(NetworkAllowlist, "example.com"), [3]want{wMode, wAskTool, wAllow}},
		{"allowlist then network_in_plan_mode", fetch("https://example.com/"), Merge(Layer{Network: ptr(NetworkAllowlist), NetworkAllowHosts: []string{"example.com"}, NetworkInPlanMode: ptr(false)}), [3]want{wNet, wAllow, wAllow}},
		{"allow lets everything through to the mode", send("https://anything.example/"), net(NetworkAllow), [3]want{wMode, wAskTool, wAllow}},
	}
	for _, tt := range tests {
		for i, m := range modes {
			t.Run(tt.name+"/"+string(m), func(t *testing.T) {
				checkDecision(t, Evaluate(tt.call, b.agentIn(m), tt.settings), tt.want[i])
				if d := Evaluate(tt.call, b.agentIn(m), tt.settings); d.Verdict == VerdictBlock && d.Liftable() {
					t.Errorf("got a liftable block %v, want policy blocks never liftable", d)
				}
			})
		}
	}
}

// TestEvaluateAgent covers the agent's side: the ceiling, unknown modes and
// dangerouslySkipPermissions.
func TestEvaluateAgent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	write := Call{Tool: "files.put", Effects: []Effect{EffectFSWrite}}
	denyRm := Merge(Layer{Permissions: Rules{Deny: []string{"command(rm)"}}})
	netDeny := Merge(Layer{Network: ptr(NetworkDeny)})
	fetch := Call{Tool: "web.fetch", Effects: []Effect{EffectNetRead}}

	tests := []struct {
		name     string
		agent    Agent
		call     Call
		settings Settings
		want     want
	}{
		{"auto under a plan ceiling", Agent{ExecutionMode: ModeAuto, MaxExecutionMode: ModePlan}, write, Merge(), wMode},
		{"auto under an accept-edits ceiling", Agent{ExecutionMode: ModeAuto, MaxExecutionMode: ModeAcceptEdits}, write, Merge(), wAskTool},
		{"accept-edits under an auto ceiling", Agent{ExecutionMode: ModeAcceptEdits, MaxExecutionMode: ModeAuto}, write, Merge(), wAskTool},
		{"auto under an unknown ceiling", Agent{ExecutionMode: ModeAuto, MaxExecutionMode: "bogus"}, write, Merge(), wMode},
		{"no mode is plan", Agent{}, write, Merge(), wMode},
		{"a harness mode is plan", Agent{ExecutionMode: "interactive"}, write, Merge(), wMode},
		{"a mode in the wrong case is plan", Agent{ExecutionMode: "Auto"}, write, Merge(), wMode},
		{"skip answers a tool prompt", Agent{ExecutionMode: ModeAcceptEdits, DangerouslySkipPermissions: true}, write, Merge(), wAllow},
		{"skip answers a command prompt", Agent{ExecutionMode: ModeAcceptEdits, DangerouslySkipPermissions: true}, shell("npm install"), Merge(), wAllow},
		{"skip leaves a plan block", Agent{ExecutionMode: ModePlan, DangerouslySkipPermissions: true}, write, Merge(), wMode},
		{"skip leaves a deny block", Agent{ExecutionMode: ModeAuto, DangerouslySkipPermissions: true}, shell("rm -rf /"), denyRm, wDeny},
		{"skip leaves an unchecked command blocked", Agent{ExecutionMode: ModeAuto, DangerouslySkipPermissions: true}, shell("`echo rm` -rf /"), denyRm, wDeny},
		{"skip leaves a network block", Agent{ExecutionMode: ModeAuto, DangerouslySkipPermissions: true}, fetch, netDeny, wNet},
		{"skip leaves the workspace boundary", Agent{ExecutionMode: ModeAuto, DangerouslySkipPermissions: true, WorkspacePaths: []string{b.workspace}}, Call{Tool: "read", Effects: []Effect{EffectRead}, Paths: []string{b.outside}}, Merge(), wWS},
		{"no workspace confines everything", Agent{ExecutionMode: ModeAuto}, Call{Tool: "read", Effects: []Effect{EffectRead}, Paths: []string{b.workspace}}, Merge(), wWS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDecision(t, Evaluate(tt.call, tt.agent, tt.settings), tt.want)
		})
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	ae := Agent{ExecutionMode: ModeAcceptEdits}
	tests := []struct {
		name         string
		call         Call
		agent        Agent
		settings     Settings
		wantVerdict  Verdict
		wantKind     BlockKind
		wantLiftable bool
	}{
		{"allow stays allow", Call{Tool: "read", Effects: []Effect{EffectRead}}, ae, Merge(), VerdictAllow, BlockNone, false},
		{"a tool prompt is a liftable block", Call{Tool: "email.send", Effects: []Effect{EffectNetWrite}}, ae, Merge(), VerdictBlock, BlockNotAllowedByDefault, true},
		{"a command prompt is a liftable block", shell("npm install"), ae, Merge(), VerdictBlock, BlockCommandNotAllowed, true},
		{"a mode block is not liftable", Call{Tool: "email.send", Effects: []Effect{EffectNetWrite}}, Agent{ExecutionMode: ModePlan}, Merge(), VerdictBlock, BlockMode, false},
		{"a deny block is not liftable", shell("rm x"), ae, Merge(Layer{Permissions: Rules{Deny: []string{"command(rm)"}}}), VerdictBlock, BlockDeny, false},
		{"a network block is not liftable", Call{Tool: "web.fetch", Effects: []Effect{EffectNetRead}}, ae, Merge(Layer{Network: ptr(NetworkDeny)}), VerdictBlock, BlockNetwork, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.call, tt.agent, tt.settings)
			if got.Verdict != tt.wantVerdict || got.Block != tt.wantKind {
				t.Errorf("got %v (%v), want %v (%v)", got.Verdict, got.Block, tt.wantVerdict, tt.wantKind)
			}
			if got.Liftable() != tt.wantLiftable {
				t.Errorf("got Liftable %v, want %v", got.Liftable(), tt.wantLiftable)
			}
			ev := Evaluate(tt.call, tt.agent, tt.settings)
			if tt.wantLiftable && ev.Verdict != VerdictPrompt {
				t.Errorf("got Evaluate %v, want prompt for a liftable block", ev.Verdict)
			}
		})
	}
}

func TestTier(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		decision Decision
		wantTier Tier
		wantOK   bool
	}{
		{"allow is auto", allowed("ok."), TierAuto, true},
		{"prompt is gated", prompted(BlockNotAllowedByDefault, "asks.", "writes files"), TierGated, true},
		{"block is refused", blocked(BlockDeny, "no."), "", false},
		{"a liftable block from Decide is refused", Decision{Verdict: VerdictBlock, Block: BlockCommandNotAllowed}, "", false},
		{"the zero decision is refused", Decision{}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tier, ok := tt.decision.Tier()
			if tier != tt.wantTier || ok != tt.wantOK {
				t.Errorf("got %q, %v, want %q, %v", tier, ok, tt.wantTier, tt.wantOK)
			}
		})
	}
}

// TestEvaluateMonotone is the property of issue 3: for the same call, raising the mode
// never gives a stricter answer, and a deny rule blocks in every mode. It walks every
// combination of a set of calls, policies and agent flags.
func TestEvaluateMonotone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	effectSets := [][]Effect{nil, {EffectRead}, {EffectNetRead}, {EffectRead, EffectNetRead}, {EffectStateWrite},
		{EffectRead, EffectNetRead, EffectStateWrite}, {EffectFSWrite}, {EffectExec}, {EffectNetWrite}, {"other"}}
	var calls []Call
	for _, es := range effectSets {
		for _, url := range []any{nil, "https://example.com/x", "https://evil.com/"} {
			for _, p := range [][]string{nil, {filepath.Join(b.workspace, "f")}, {filepath.Join(b.outside, "f")}} {
				args := map[string]any{}
				if url != nil {
					args["url"] = url
				}
				calls = append(calls,
					Call{Tool: "t", Effects: es, Args: args, Paths: p},
					Call{Tool: "edit", Edit: true, Effects: es, Args: args, Paths: p})
			}
		}
	}
	for _, cmd := range []string{"git status", "rm -rf /", "ls | rm x", "echo $(rm x)", "$X", "npm install", "", "git status; rm x"} {
		calls = append(calls, shell(cmd))
	}
	var policies []Settings
	for _, n := range []NetworkPolicy{NetworkAllow, NetworkAllowlist, NetworkDeny} {
		for _, nipm := range []bool{true, false} {
			for _, outside := range []bool{true, false} {
				for _, deny := range [][]string{nil, {"command(rm)"}} {
					policies = append(policies, Merge(Layer{
						Network: ptr(n), NetworkInPlanMode: ptr(nipm), NetworkAllowHosts: []string{"example.com"},
						AllowNonWorkspaceAccess: ptr(outside),
						Permissions:             Rules{Allow: []string{"command(git status)", "command(rm)"}, Deny: deny},
					}))
				}
			}
		}
	}
	checked := 0
	for _, c := range calls {
		for _, s := range policies {
			for _, skip := range []bool{false, true} {
				var prev Decision
				for i, m := range modes {
					a := Agent{ExecutionMode: m, WorkspacePaths: []string{b.workspace}, DangerouslySkipPermissions: skip}
					d := Evaluate(c, a, s)
					checked++
					if i > 0 && d.Verdict.strictness() > prev.Verdict.strictness() {
						t.Errorf("call %+v, policy %+v, skip %v: got %v in %s after %v in %s, want never stricter as the mode rises",
							c, s, skip, d, m, prev, modes[i-1])
					}
					if c.Shell && len(s.Deny) > 0 {
						if cmd, _ := c.Args["command"].(string); cmd != "" && containsWord(cmd, "rm") && d.Verdict != VerdictBlock {
							t.Errorf("command %q with deny %v in %s: got %v, want block", cmd, s.Deny, m, d)
						}
					}
					prev = d
				}
			}
		}
	}
	if checked < 1000 {
		t.Errorf("got %d decisions checked, want at least 1000", checked)
	}
}

// containsWord reports whether w appears in s as a word of letters.
func containsWord(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i:i+len(w)] != w {
			continue
		}
		before := i == 0 || !isLetter(s[i-1])
		after := i+len(w) == len(s) || !isLetter(s[i+len(w)])
		if before && after {
			return true
		}
	}
	return false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
