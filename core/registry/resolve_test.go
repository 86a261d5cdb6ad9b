package registry

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"buddi/plugins"
)

// resolveBundle is a registry holding one tool of each kind the refusal tests need.
type resolveBundle struct {
	reg     *Registry
	blocker *blocker
}

func setupResolve(t *testing.T) *resolveBundle {
	t.Helper()
	b := newBlocker(t)
	hang := newTool("test.hang_tier", plugins.TierAuto)
	hang.spec.Timeout = 20e6 // 20ms
	reg := mustNew(t, manifest(
		newTool("test.read", plugins.TierAuto),
		newTool("test.draft", plugins.TierDraft),
		newTool("test.browse", plugins.TierSession),
		narrowing(newTool("test.narrow_draft", plugins.TierAuto), plugins.TierDraft),
		narrowing(newTool("test.narrow_empty", plugins.TierGated), ""),
		narrowing(newTool("test.narrow_bogus", plugins.TierSession), "always"),
		&narrowTool{testTool: newTool("test.panic_tier", plugins.TierAuto), tierFor: func(context.Context, plugins.Call) plugins.Tier {
			panic("tierFor exploded")
		}},
		&narrowTool{testTool: hang, tierFor: func(context.Context, plugins.Call) plugins.Tier {
			b.wait()
			return plugins.TierAuto
		}},
	))
	return &resolveBundle{reg: reg, blocker: b}
}

func TestResolveRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		call plugins.Call
		code Code
		want []string // pieces of the reason
	}{
		{"args array", plainCall("test.read", `[]`), CodeInvalidArguments, []string{"must be a JSON object, not an array"}},
		{"args bare number", plainCall("test.read", `12`), CodeInvalidArguments, []string{"not a number"}},
		{"args duplicate key", plainCall("test.read", `{"path":"a","path":"b"}`), CodeInvalidArguments, []string{"/path", "more than once"}},
		{"args empty", plainCall("test.read", ``), CodeInvalidArguments, []string{"empty"}},
		{"args exponent", plainCall("test.read", `{"path":"a","lines":1e999999}`), CodeInvalidArguments, []string{"/lines", "exponent"}},
		{"args invalid JSON", plainCall("test.read", `{"path":`), CodeInvalidArguments, []string{"not valid JSON"}},
		{"args long number", plainCall("test.read", `{"path":"a","lines":`+strings.Repeat("9", 65)+`}`), CodeInvalidArguments, []string{"/lines", "longer than"}},
		{"args nested too deep", plainCall("test.read", `{"path":"a","x":`+strings.Repeat("[", 300)+strings.Repeat("]", 300)+`}`), CodeInvalidArguments, []string{"deeper than"}},
		{"args null", plainCall("test.read", `null`), CodeInvalidArguments, []string{"not null"}},
		{"args string", plainCall("test.read", `"{}"`), CodeInvalidArguments, []string{"not a string"}},
		{"args trailing comma", plainCall("test.read", `{"path":"a",}`), CodeInvalidArguments, []string{"not valid JSON"}},
		{"args two objects", plainCall("test.read", `{"path":"a"} {}`), CodeInvalidArguments, []string{"nothing after it"}},
		{"args whitespace", plainCall("test.read", " \n\t"), CodeInvalidArguments, []string{"empty"}},
		{"declared draft", plainCall("test.draft", `{"path":"a"}`), CodeTierNotExecutable, []string{"draft"}},
		{"draft checks args first", plainCall("test.draft", `{}`), CodeInvalidArguments, []string{"/path: is required"}},
		{"schema additional nested", plainCall("test.read", `{"path":"a","opts":{"mode":"fast","color":"red"}}`), CodeInvalidArguments, []string{"/opts/color: is not allowed"}},
		{"schema additional top", plainCall("test.read", `{"path":"a","rm":true}`), CodeInvalidArguments, []string{"/rm: is not allowed"}},
		{"schema enum nested", plainCall("test.read", `{"path":"a","opts":{"mode":"warp"}}`), CodeInvalidArguments, []string{"/opts/mode:", "fast", "slow"}},
		{"schema integer", plainCall("test.read", `{"path":"a","lines":1.5}`), CodeInvalidArguments, []string{"/lines: got number, want integer"}},
		{"schema maximum nested", plainCall("test.read", `{"path":"a","opts":{"mode":"fast","depth":9}}`), CodeInvalidArguments, []string{"/opts/depth:", "maximum"}},
		{"schema minimum", plainCall("test.read", `{"path":"a","lines":0}`), CodeInvalidArguments, []string{"/lines:", "minimum"}},
		{"schema missing", plainCall("test.read", `{}`), CodeInvalidArguments, []string{"/path: is required"}},
		{"schema missing nested", plainCall("test.read", `{"path":"a","opts":{}}`), CodeInvalidArguments, []string{"/opts/mode: is required"}},
		{"schema several", plainCall("test.read", `{"path":7,"lines":"x"}`), CodeInvalidArguments, []string{"/path: got number, want string", "/lines: got string, want integer"}},
		{"schema type", plainCall("test.read", `{"path":3}`), CodeInvalidArguments, []string{"/path: got number, want string"}},
		{"schema weird key", plainCall("test.read", `{"path":"a","a/b~c\n":1}`), CodeInvalidArguments, []string{`"/a~1b~0c\n": is not allowed`}},
		{"session without owner", plainCall("test.browse", `{"path":"a"}`), CodeSessionNotAuthorized, []string{"no owner request"}},
		{"tierFor answers bogus", sessionCall("test.narrow_bogus", `{"path":"a"}`), CodeTierNotExecutable, []string{`"always"`}},
		{"tierFor answers draft", plainCall("test.narrow_draft", `{"path":"a"}`), CodeTierNotExecutable, []string{`"draft"`}},
		{"tierFor answers empty", plainCall("test.narrow_empty", `{"path":"a"}`), CodeTierNotExecutable, []string{`""`}},
		{"tierFor hangs", plainCall("test.hang_tier", `{"path":"a"}`), CodeTierForFailed, []string{"in time"}},
		{"tierFor panics", plainCall("test.panic_tier", `{"path":"a"}`), CodeTierForFailed, []string{"crashed"}},
		{"unknown tool", plainCall("test.nope", `{}`), CodeUnknownTool, []string{"no tool named test.nope"}},
		{"unknown tool checked before args", plainCall("nope", `not json`), CodeUnknownTool, []string{"nope"}},
		{"unknown tool quoted", plainCall("x\ny", `{}`), CodeUnknownTool, []string{`"x\ny"`}},
	}
	bundle := setupResolve(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := bundle.reg.Resolve(t.Context(), tt.call, testNow)
			if err == nil {
				t.Fatalf("Resolve succeeded at tier %s, want %s", res.Tier, tt.code)
			}
			var ref *Refusal
			if !errors.As(err, &ref) {
				t.Fatalf("error %v is not a *Refusal", err)
			}
			if ref.Code != tt.code || !errors.Is(err, tt.code) {
				t.Errorf("code = %s, want %s (%v)", ref.Code, tt.code, err)
			}
			if ref.Tool != tt.call.Tool {
				t.Errorf("Tool = %q, want %q", ref.Tool, tt.call.Tool)
			}
			for _, w := range tt.want {
				if !strings.Contains(ref.Reason, w) {
					t.Errorf("reason %q does not say %q", ref.Reason, w)
				}
			}
			if strings.Contains(ref.Reason, "\n") {
				t.Errorf("reason %q is not one line", ref.Reason)
			}
		})
	}
}

func TestResolvePanicCauseIsLogged(t *testing.T) {
	t.Parallel()
	bundle := setupResolve(t)
	_, err := bundle.reg.Resolve(t.Context(), plainCall("test.panic_tier", `{"path":"a"}`), testNow)
	if err == nil || !strings.Contains(err.Error(), "tierFor exploded") || !strings.Contains(err.Error(), "goroutine") {
		t.Errorf("error %v lacks the panic and its stack", err)
	}
	var ref *Refusal
	if errors.As(err, &ref) && strings.Contains(ref.Reason, "exploded") {
		t.Errorf("reason %q shows the panic to the model", ref.Reason)
	}
}

func TestResolveAccepts(t *testing.T) {
	t.Parallel()
	reg := mustNew(t, manifest(newTool("test.read", plugins.TierAuto)))
	res, err := reg.Resolve(t.Context(), plainCall("test.read", ` {"path":"a","lines":2.0,"opts":{"mode":"fast","depth":5}} `), testNow)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tier != plugins.TierAuto || res.Version != "1.2.3" || res.Spec.Name != "test.read" || res.Narrowed != "" || res.SessionChecked {
		t.Errorf("got %+v", res)
	}
	if res.Args["path"] != "a" || res.Args["lines"] != json.Number("2.0") {
		t.Errorf("args = %#v", res.Args)
	}
	if res.Reason != "declared auto" {
		t.Errorf("reason = %q", res.Reason)
	}
}

func TestTierForSeesArgsCopy(t *testing.T) {
	t.Parallel()
	tool := &narrowTool{testTool: newTool("test.n", plugins.TierAuto), tierFor: func(_ context.Context, call plugins.Call) plugins.Tier {
		call.Args[0] = 'X' // a careless TierFor scribbles on its arguments
		return plugins.TierGated
	}}
	reg := mustNew(t, manifest(tool))
	call := plainCall("test.n", `{"path":"a"}`)
	if _, err := reg.Resolve(t.Context(), call, testNow); err != nil {
		t.Fatal(err)
	}
	if string(call.Args) != `{"path":"a"}` {
		t.Errorf("TierFor changed the caller's arguments to %s", call.Args)
	}
}

func TestRefusalError(t *testing.T) {
	t.Parallel()
	cause := errors.New("the cause")
	r := &Refusal{Code: CodeDescribeFailed, Tool: "test.a", Reason: "it broke", Err: cause}
	if got, want := r.Error(), "registry: test.a refused (describe-failed): it broke: the cause"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(r, cause) || !errors.Is(r, CodeDescribeFailed) || errors.Is(r, CodeUnknownTool) {
		t.Error("errors.Is does not see the cause and the code")
	}
}
