package developer

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"buddi/core/registry"
	"buddi/plugins"
	"buddi/plugins/developer/runlist"
)

const (
	auto  = plugins.TierAuto
	gated = plugins.TierGated
)

// TestManifest checks the manifest loads into the real registry as seed 000 declares it:
// every tool session-tier, narrowing, with a schema and declared effects; no network hosts.
func TestManifest(t *testing.T) {
	t.Parallel()
	m := Manifest(Deps{})
	if m.Name != "developer" || m.Schema != "developer" || m.Version == "" || m.Network != nil || m.Migrations == nil {
		t.Fatalf("got manifest %q %q %q %v", m.Name, m.Schema, m.Version, m.Network)
	}
	reg, err := registry.New(m)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"developer.edit", "developer.git", "developer.list", "developer.output", "developer.preview", "developer.read", "developer.run", "developer.screenshot", "developer.search", "developer.start", "developer.stop", "developer.summarise", "developer.workspace", "developer.write"}
	specs := reg.Tools()
	if len(specs) != len(want) {
		t.Fatalf("got %d tools, want %v", len(specs), want)
	}
	for i, s := range specs {
		if s.Name != want[i] {
			t.Errorf("tool %d: got %s, want %s", i, s.Name, want[i])
		}
		if s.Tier != plugins.TierSession {
			t.Errorf("%s: declares %s, want session (§3)", s.Name, s.Tier)
		}
		tool, _ := reg.Lookup(s.Name)
		if _, ok := tool.(plugins.TierNarrower); !ok {
			t.Errorf("%s: does not narrow with TierFor", s.Name)
		}
		_, describes := tool.(plugins.PolicyDescriber)
		// The edits show the policy their paths; run shows its command, for the deny rules.
		if want := s.Name == "developer.write" || s.Name == "developer.edit" || s.Name == "developer.run" || s.Name == "developer.start"; describes != want {
			t.Errorf("%s: PolicyDescriber %v, want %v", s.Name, describes, want)
		}
		if s.Timeout <= 0 {
			t.Errorf("%s: no timeout", s.Name)
		}
	}
}

// TestTierPerMode is §3's table through the registry, for each tool in each mode.
func TestTierPerMode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	writeFile(t, filepath.Join(b.ws, "src", ".gitattributes"), "*.go diff\n")
	tests := []struct {
		name          string
		verb, args    string
		ask, edit, rn plugins.Tier
	}{
		{"workspace", "workspace", `{"directory":"` + b.ws + `"}`, gated, gated, gated},
		{"read", "read", `{"path":"a.txt"}`, auto, auto, auto},
		{"list", "list", `{}`, auto, auto, auto},
		{"search", "search", `{"query":"needle"}`, auto, auto, auto},
		{"write a new file", "write", `{"path":"new/file.txt","content":"x"}`, gated, auto, auto},
		{"write over a file", "write", `{"path":"a.txt","content":"x"}`, gated, auto, auto},
		{"edit", "edit", `{"path":"a.txt","old":"alpha","new":"ALPHA"}`, gated, auto, auto},
		{"write .gitmodules", "write", `{"path":".gitmodules","content":"x"}`, gated, gated, gated},
		{"edit .gitattributes", "edit", `{"path":"src/.gitattributes","old":"diff","new":"-diff"}`, gated, gated, gated},
		{"write .GITATTRIBUTES", "write", `{"path":".GITATTRIBUTES","content":"x"}`, gated, gated, gated},
		{"write into .git", "write", `{"path":".git/config","content":"x"}`, gated, gated, gated},
		{"read outside", "read", `{"path":"../outside/secret.txt"}`, gated, gated, gated},
		{"read absolute outside", "read", `{"path":"` + filepath.Join(b.outside, "secret.txt") + `"}`, gated, gated, gated},
		{"read through a link", "read", `{"path":"link-out/secret.txt"}`, gated, gated, gated},
		{"list through a link", "list", `{"path":"link-in"}`, gated, gated, gated},
		{"search through a link", "search", `{"query":"x","path":"link-out"}`, gated, gated, gated},
		{"write through a link inside", "write", `{"path":"link-in/new.go","content":"x"}`, gated, gated, gated},
		{"edit a link", "edit", `{"path":"link-file-out","old":"a","new":"b"}`, gated, gated, gated},
	}
	// Subtests share the agent's mode, so they run in order, mode by mode.
	for _, mode := range []runlist.Mode{runlist.ModeAsk, runlist.ModeEdit, runlist.ModeRun} {
		b.setMode(t, mode)
		for _, tt := range tests {
			want := map[runlist.Mode]plugins.Tier{runlist.ModeAsk: tt.ask, runlist.ModeEdit: tt.edit, runlist.ModeRun: tt.rn}[mode]
			if got := b.tier(t, call(tt.verb, tt.args)); got != want {
				t.Errorf("%s mode, %s: got %s, want %s", mode, tt.name, got, want)
			}
		}
	}
}

// TestTierWithoutWorkspace: an agent with no workspace gets every tool gated (§3), and
// Describe refuses the call with the rule before any card exists.
func TestTierWithoutWorkspace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, c := range []struct{ verb, args string }{
		{"read", `{"path":"a.txt"}`},
		{"list", `{}`},
		{"search", `{"query":"x"}`},
		{"write", `{"path":"a.txt","content":"x"}`},
		{"edit", `{"path":"a.txt","old":"alpha","new":"b"}`},
	} {
		cl := call(c.verb, c.args)
		cl.Agent = "stranger"
		if got := b.tier(t, cl); got != gated {
			t.Errorf("%s: got %s, want gated", c.verb, got)
		}
		if _, err := b.describe(t, cl); err == nil || !errors.Is(err, registry.CodeDescribeFailed) {
			t.Errorf("%s: Describe got %v, want a refusal", c.verb, err)
		} else if ref := err.(*registry.Refusal); !strings.Contains(ref.Reason, "has no workspace") {
			t.Errorf("%s: Describe reason %q does not name the rule", c.verb, ref.Reason)
		}
		b.mustFail(t, cl, nil, "has no workspace")
	}
	if got := readFile(t, filepath.Join(b.ws, "a.txt")); got != "alpha\nbeta\n" {
		t.Errorf("a.txt is now %q", got)
	}
}

// TestModeChangeAppliesToNextCall: the mode is read on every call (§3), and no mode row
// means run.
func TestModeChangeAppliesToNextCall(t *testing.T) {
	t.Parallel()
	b := setup(t)
	write := call("write", `{"path":"new.txt","content":"x"}`)
	mode, err := b.store.Mode(context.Background(), agent)
	if err != nil || mode != runlist.ModeRun {
		t.Fatalf("default mode: got %q, %v; want run", mode, err)
	}
	if got := b.tier(t, write); got != auto {
		t.Fatalf("run mode (the default): got %s, want auto", got)
	}
	b.setMode(t, runlist.ModeAsk)
	if got := b.tier(t, write); got != gated {
		t.Errorf("after the owner chose ask: got %s, want gated", got)
	}
	// The agent's own next call cannot get past it either: Execute re-reads the mode.
	b.mustFail(t, write, nil, "needs the owner's approval")
	absent(t, filepath.Join(b.ws, "new.txt"))
	b.setMode(t, runlist.ModeEdit)
	if got := b.tier(t, write); got != auto {
		t.Errorf("after the owner chose edit: got %s, want auto", got)
	}
	b.mustRun(t, write, nil)
}

// TestSessionChecksEveryMode: a delegate, or a call outside a live owner request, gets
// none of the tools even in run mode (§3, §10 item 5).
func TestSessionChecksEveryMode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	delegated := call("read", `{"path":"a.txt"}`)
	delegated.DelegationDepth = 1
	scheduled := call("read", `{"path":"a.txt"}`)
	scheduled.Owner = nil
	for _, c := range []plugins.Call{delegated, scheduled} {
		if _, err := b.reg.Resolve(context.Background(), c, testNow); !errors.Is(err, registry.CodeSessionNotAuthorized) {
			t.Errorf("got %v, want session-not-authorized", err)
		}
	}
}

// TestSetModeRefusesOthers: only ask, edit and run are modes.
func TestSetModeRefusesOthers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := b.store.SetMode(context.Background(), agent, "yolo"); err == nil {
		t.Error("SetMode accepted yolo")
	}
	if err := b.store.SetMode(context.Background(), "", runlist.ModeAsk); err == nil {
		t.Error("SetMode accepted no agent")
	}
}
