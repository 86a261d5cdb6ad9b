package registry

import (
	"errors"
	"strings"
	"testing"
	"time"

	"buddi/plugins"
)

// TestSessionChecks breaks each session condition alone, for a declared-session tool, a
// declared-session tool that narrows to auto (the developer plugin in run mode), and a
// declared-auto tool that narrows to session.
func TestSessionChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*plugins.Call)
		want   string
	}{
		{"agent missing", func(c *plugins.Call) { c.Agent = "" }, "names no agent"},
		{"conversation missing", func(c *plugins.Call) { c.ConversationID = "" }, "no conversation"},
		{"delegated", func(c *plugins.Call) { c.DelegationDepth = 1 }, "delegated run (depth 1)"},
		{"delegation depth negative", func(c *plugins.Call) { c.DelegationDepth = -1 }, "delegated run (depth -1)"},
		{"not granted", func(c *plugins.Call) { c.Granted = false }, "not in the agent's grant"},
		{"owner expired", func(c *plugins.Call) { c.Owner.ExpiresAt = testNow.Add(-time.Second) }, "expired at 2026-03-01T11:59:59Z"},
		{"owner expires now", func(c *plugins.Call) { c.Owner.ExpiresAt = testNow }, "expired"},
		{"owner missing", func(c *plugins.Call) { c.Owner = nil }, "no owner request"},
		{"owner zero", func(c *plugins.Call) { c.Owner = &plugins.OwnerRequest{} }, "expired"},
	}
	reg := mustNew(t, manifest(
		newTool("test.session", plugins.TierSession),
		narrowing(newTool("test.session_auto", plugins.TierSession), plugins.TierAuto),
		narrowing(newTool("test.auto_session", plugins.TierAuto), plugins.TierSession),
	))
	for _, tool := range []string{"test.session", "test.session_auto", "test.auto_session"} {
		// The unbroken call passes.
		if _, err := reg.Resolve(t.Context(), sessionCall(tool, `{"path":"a"}`), testNow); err != nil {
			t.Fatalf("%s: the full session call is refused: %v", tool, err)
		}
		for _, tt := range tests {
			t.Run(tool+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				call := sessionCall(tool, `{"path":"a"}`)
				tt.mutate(&call)
				res, err := reg.Resolve(t.Context(), call, testNow)
				if !errors.Is(err, CodeSessionNotAuthorized) {
					t.Fatalf("Resolve = %+v, %v; want session-not-authorized", res, err)
				}
				var ref *Refusal
				errors.As(err, &ref)
				if !strings.Contains(ref.Reason, tt.want) {
					t.Errorf("reason %q does not say %q", ref.Reason, tt.want)
				}
				if n := strings.Count(ref.Reason, ";"); n != 1 {
					t.Errorf("reason %q names %d failed conditions, want exactly 1", ref.Reason, n)
				}
			})
		}
	}
}

// TestSessionChecksNameEveryFailure: a call that fails several conditions hears of each.
func TestSessionChecksNameEveryFailure(t *testing.T) {
	t.Parallel()
	reg := mustNew(t, manifest(newTool("test.session", plugins.TierSession)))
	_, err := reg.Resolve(t.Context(), plugins.Call{Tool: "test.session", Args: []byte(`{"path":"a"}`), DelegationDepth: 2}, testNow)
	var ref *Refusal
	if !errors.As(err, &ref) || ref.Code != CodeSessionNotAuthorized {
		t.Fatalf("Resolve error = %v", err)
	}
	for _, w := range []string{"no owner request", "grant", "no agent", "no conversation", "depth 2"} {
		if !strings.Contains(ref.Reason, w) {
			t.Errorf("reason %q does not say %q", ref.Reason, w)
		}
	}
}
