package registry

import (
	"errors"
	"fmt"
	"testing"

	"buddi/plugins"
)

// TestTierFloor runs every declared tier against every answer TierFor may give, through
// Resolve, once inside a live owner request and once outside one.
func TestTierFloor(t *testing.T) {
	t.Parallel()
	const (
		auto    = plugins.TierAuto
		gated   = plugins.TierGated
		session = plugins.TierSession
		draft   = plugins.TierDraft
	)
	tests := []struct {
		declared, narrowed plugins.Tier
		want               plugins.Tier // effective tier; "" for tier-not-executable
		session            bool         // whether the session checks apply
	}{
		{auto, auto, auto, false},
		{auto, gated, gated, false},
		{auto, session, session, true},
		{auto, draft, "", false},
		{auto, "", "", false},
		{auto, "bogus", "", false},
		{gated, auto, gated, false}, // never loosened
		{gated, gated, gated, false},
		{gated, session, session, true},
		{gated, draft, "", false},
		{gated, "", "", false},
		{gated, "bogus", "", false},
		{session, auto, auto, true}, // the declared tier's checks still run
		{session, gated, gated, true},
		{session, session, session, true},
		{session, draft, "", true},
		{session, "", "", true},
		{session, "bogus", "", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s_to_%q", tt.declared, tt.narrowed), func(t *testing.T) {
			t.Parallel()
			reg := mustNew(t, manifest(narrowing(newTool("test.n", tt.declared), tt.narrowed)))

			// Inside a live owner request every session check passes.
			res, err := reg.Resolve(t.Context(), sessionCall("test.n", `{"path":"a"}`), testNow)
			if tt.want == "" {
				if !errors.Is(err, CodeTierNotExecutable) {
					t.Fatalf("Resolve = %+v, %v; want tier-not-executable", res, err)
				}
			} else {
				if err != nil {
					t.Fatalf("Resolve: %v", err)
				}
				if res.Tier != tt.want || res.Narrowed != tt.narrowed || res.SessionChecked != tt.session {
					t.Errorf("got tier %s narrowed %s session %v, want %s %s %v", res.Tier, res.Narrowed, res.SessionChecked, tt.want, tt.narrowed, tt.session)
				}
			}

			// Outside one (a scheduled run), a call the session checks apply to is refused.
			res, err = reg.Resolve(t.Context(), plainCall("test.n", `{"path":"a"}`), testNow)
			switch {
			case tt.want == "":
				if !errors.Is(err, CodeTierNotExecutable) {
					t.Errorf("outside an owner request: %+v, %v; want tier-not-executable", res, err)
				}
			case tt.session:
				if !errors.Is(err, CodeSessionNotAuthorized) {
					t.Errorf("outside an owner request: %+v, %v; want session-not-authorized", res, err)
				}
			default:
				if err != nil || res.Tier != tt.want || res.SessionChecked {
					t.Errorf("outside an owner request: %+v, %v; want tier %s", res, err, tt.want)
				}
			}

			// EffectiveTier agrees with Resolve.
			eff, ok := EffectiveTier(tt.declared, tt.narrowed)
			if ok != (tt.want != "") || eff != tt.want {
				t.Errorf("EffectiveTier(%s, %q) = %q, %v; want %q", tt.declared, tt.narrowed, eff, ok, tt.want)
			}
		})
	}
}

// TestTierWithoutNarrower: a tool without TierFor is treated at its declared tier.
func TestTierWithoutNarrower(t *testing.T) {
	t.Parallel()
	tests := []struct {
		declared plugins.Tier
		session  bool
	}{
		{plugins.TierAuto, false},
		{plugins.TierGated, false},
		{plugins.TierSession, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.declared), func(t *testing.T) {
			t.Parallel()
			reg := mustNew(t, manifest(newTool("test.t", tt.declared)))
			res, err := reg.Resolve(t.Context(), sessionCall("test.t", `{"path":"a"}`), testNow)
			if err != nil || res.Tier != tt.declared || res.SessionChecked != tt.session || res.Narrowed != "" {
				t.Errorf("Resolve = %+v, %v", res, err)
			}
		})
	}
}

func TestEffectiveTierRefusesDraftDeclared(t *testing.T) {
	t.Parallel()
	for _, n := range []plugins.Tier{plugins.TierAuto, plugins.TierGated, plugins.TierSession} {
		if eff, ok := EffectiveTier(plugins.TierDraft, n); ok {
			t.Errorf("EffectiveTier(draft, %s) = %s, ok", n, eff)
		}
	}
}

func TestTierReason(t *testing.T) {
	t.Parallel()
	reg := mustNew(t, manifest(narrowing(newTool("test.n", plugins.TierGated), plugins.TierAuto)))
	res, err := reg.Resolve(t.Context(), plainCall("test.n", `{"path":"a"}`), testNow)
	if err != nil {
		t.Fatal(err)
	}
	if want := "declared gated; TierFor chose auto, kept gated because the declared tier is the floor"; res.Reason != want {
		t.Errorf("reason = %q, want %q", res.Reason, want)
	}
}
