package permission

import (
	"strings"
	"testing"
)

// A plugin's declared hosts (its manifest's network lines) are checked by an allowlist: each
// must be listed, and then a call needs no url argument.
func TestAllowlistChecksDeclaredHosts(t *testing.T) {
	s := Merge(Layer{Network: ptr(NetworkAllowlist), NetworkAllowHosts: []string{"github.com"}})
	auto := Agent{ExecutionMode: ModeAuto}
	call := func(hosts []string, args map[string]any) Call {
		return Call{Tool: "gh.issues", Effects: []Effect{EffectNetRead}, Hosts: hosts, Args: args}
	}
	if d := Evaluate(call([]string{"api.github.com"}, nil), auto, s); d.Verdict != VerdictAllow {
		t.Errorf("a listed host, no url: %v, want allow", d)
	}
	d := Evaluate(call([]string{"api.github.com", "uploads.example.net"}, nil), auto, s)
	if d.Verdict != VerdictBlock || d.Block != BlockNetwork || !strings.Contains(d.Reason, "uploads.example.net") {
		t.Errorf("one host off the list: %v, want a network block naming it", d)
	}
	if d := Evaluate(call([]string{"api.github.com"}, map[string]any{"url": "https://example.org/"}), auto, s); d.Verdict != VerdictBlock {
		t.Errorf("a listed host with a url off the list: %v, want block", d)
	}
	if d := Evaluate(call(nil, nil), auto, s); d.Verdict != VerdictBlock {
		t.Errorf("no hosts and no url: %v, want block", d)
	}
	// A url that is not a string is no url to pass over: the host cannot be checked.
	for _, odd := range []any{[]any{"https://evil.example/"}, map[string]any{"href": "https://evil.example/"}, 42.0} {
		if d := Evaluate(call([]string{"api.github.com"}, map[string]any{"url": odd}), auto, s); d.Verdict != VerdictBlock {
			t.Errorf("a listed host with url %v: %v, want block", odd, d)
		}
	}
	if d := Evaluate(call([]string{"not a host"}, nil), auto, s); d.Verdict != VerdictBlock {
		t.Errorf("a host that cannot be read: %v, want block", d)
	}
	deny := Merge(Layer{Network: ptr(NetworkDeny), NetworkAllowHosts: []string{"github.com"}})
	if d := Evaluate(call([]string{"api.github.com"}, nil), auto, deny); d.Verdict != VerdictBlock {
		t.Errorf("deny: %v, want block", d)
	}
}

// A mode block ends with the agent's ModeNote, one sentence.
func TestModeBlockEndsWithTheNote(t *testing.T) {
	a := Agent{ExecutionMode: ModePlan, ModeNote: "dev is in plan mode, and the owner changes it with `buddi agents mode dev auto`"}
	d := Evaluate(Call{Tool: "x.run", Effects: []Effect{EffectExec}}, a, Merge())
	if d.Block != BlockMode || !strings.HasSuffix(d.Reason, "reads; dev is in plan mode, and the owner changes it with `buddi agents mode dev auto`.") {
		t.Errorf("%v", d)
	}
	if d := Evaluate(Call{Tool: "x.read", Effects: []Effect{EffectRead}}, a, Merge()); strings.Contains(d.Reason, "buddi agents mode") {
		t.Errorf("an allowed call carries the note: %v", d)
	}
}
