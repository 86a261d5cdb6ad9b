package registry

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"buddi/plugins"
)

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	with := func(name string, edit func(*plugins.Spec)) *testTool {
		tool := newTool(name, plugins.TierAuto)
		edit(&tool.spec)
		return tool
	}
	schema := func(s string) func(*plugins.Spec) {
		return func(sp *plugins.Spec) { sp.Schema = json.RawMessage(s) }
	}
	tests := []struct {
		name      string
		manifests []plugins.Manifest
		tool      string // the tool the error must name ("" for a manifest problem)
		want      string // a piece of the error
	}{
		{"absolute ref", []plugins.Manifest{manifest(with("test.a", schema(`{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}`)))}, "test.a", "compile"},
		{"bad pattern", []plugins.Manifest{manifest(with("test.a", schema(`{"type":"object","properties":{"x":{"type":"string","pattern":"("}}}`)))}, "test.a", "compile"},
		{"bad type keyword", []plugins.Manifest{manifest(with("test.a", schema(`{"type":"object","properties":{"x":{"type":"nope"}}}`)))}, "test.a", "compile"},
		{"duplicate across manifests", []plugins.Manifest{manifest(newTool("test.a", plugins.TierAuto)), manifest(newTool("test.a", plugins.TierAuto))}, "test.a", "registered twice"},
		{"duplicate in one manifest", []plugins.Manifest{manifest(newTool("test.a", plugins.TierAuto), newTool("test.a", plugins.TierGated))}, "test.a", "registered twice"},
		{"empty schema", []plugins.Manifest{manifest(with("test.a", schema(``)))}, "test.a", "no argument schema"},
		{"empty tier", []plugins.Manifest{manifest(with("test.a", func(s *plugins.Spec) { s.Tier = "" }))}, "test.a", "unknown tier"},
		{"invalid effect", []plugins.Manifest{manifest(with("test.a", func(s *plugins.Spec) { s.Effects = []plugins.Effect{"read", "teleport"} }))}, "test.a", `unknown effect "teleport"`},
		{"name for another plugin", []plugins.Manifest{manifest(newTool("other.a", plugins.TierAuto))}, "other.a", "name must be"},
		{"name with two dots", []plugins.Manifest{manifest(newTool("test.a.b", plugins.TierAuto))}, "test.a.b", "name must be"},
		{"name with upper case verb", []plugins.Manifest{manifest(newTool("test.Read", plugins.TierAuto))}, "test.Read", "name must be"},
		{"name without a dot", []plugins.Manifest{manifest(newTool("test", plugins.TierAuto))}, "test", "name must be"},
		{"name without a verb", []plugins.Manifest{manifest(newTool("test.", plugins.TierAuto))}, "test.", "name must be"},
		{"negative timeout", []plugins.Manifest{manifest(with("test.a", func(s *plugins.Spec) { s.Timeout = -time.Second }))}, "test.a", "negative timeout"},
		{"nil tool", []plugins.Manifest{manifest(nil)}, "#0", "is nil"},
		{"no effects", []plugins.Manifest{manifest(with("test.a", func(s *plugins.Spec) { s.Effects = nil }))}, "test.a", "no effects"},
		{"no plugin name", []plugins.Manifest{{Version: "1", Tools: []plugins.Tool{newTool("test.a", plugins.TierAuto)}}}, "", "name must match"},
		{"no version", []plugins.Manifest{{Name: "test", Tools: []plugins.Tool{newTool("test.a", plugins.TierAuto)}}}, "", "no version"},
		{"schema array", []plugins.Manifest{manifest(with("test.a", schema(`[]`)))}, "test.a", "not a JSON object"},
		{"schema not JSON", []plugins.Manifest{manifest(with("test.a", schema(`{"type":`)))}, "test.a", "parse argument schema"},
		{"schema true", []plugins.Manifest{manifest(with("test.a", schema(`true`)))}, "test.a", "not a JSON object"},
		{"schema type string", []plugins.Manifest{manifest(with("test.a", schema(`{"type":"string"}`)))}, "test.a", `"type": "object"`},
		{"schema without type", []plugins.Manifest{manifest(with("test.a", schema(`{"properties":{}}`)))}, "test.a", `"type": "object"`},
		{"spec panics", []plugins.Manifest{manifest(&panicSpecTool{newTool("test.a", plugins.TierAuto)})}, "#0", "its Spec panicked"},
		{"unknown tier", []plugins.Manifest{manifest(with("test.a", func(s *plugins.Spec) { s.Tier = "sometimes" }))}, "test.a", `unknown tier "sometimes"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := New(tt.manifests...)
			if err == nil {
				t.Fatalf("New succeeded (%d tools), want an error", len(r.Tools()))
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *LoadError", err)
			}
			found := false
			for _, e := range unjoin(err) {
				if errors.As(e, &le) && le.Tool == tt.tool && strings.Contains(e.Error(), tt.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("no LoadError names tool %q with %q: %v", tt.tool, tt.want, err)
			}
		})
	}
}

// unjoin returns the errors joined in err, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// panicSpecTool is a tool whose Spec panics.
type panicSpecTool struct{ *testTool }

func (*panicSpecTool) Spec() plugins.Spec { panic("no spec today") }

func TestNewReportsEveryProblem(t *testing.T) {
	t.Parallel()
	bad1 := newTool("test.a", plugins.TierAuto)
	bad1.spec.Tier = "x"
	bad2 := newTool("test.b", plugins.TierAuto)
	bad2.spec.Effects = nil
	_, err := New(manifest(bad1, bad2, newTool("test.c", plugins.TierAuto)))
	if err == nil {
		t.Fatal("New succeeded")
	}
	if got := len(unjoin(err)); got != 2 {
		t.Errorf("got %d errors, want 2: %v", got, err)
	}
}

func TestNewAcceptsEmptyAndValid(t *testing.T) {
	t.Parallel()
	r := mustNew(t)
	if got := r.Tools(); len(got) != 0 {
		t.Errorf("empty registry has tools %v", got)
	}
	mustNew(t, manifest(newTool("test.read", plugins.TierAuto), newTool("test.draft_thing", plugins.TierDraft)),
		plugins.Manifest{Name: "other", Version: "0.1.0"})
}

func TestToolsLookupVersion(t *testing.T) {
	t.Parallel()
	b, a := newTool("test.b", plugins.TierGated), newTool("test.a", plugins.TierAuto)
	c := newTool("zeta.c", plugins.TierSession)
	r := mustNew(t, manifest(b, a), plugins.Manifest{Name: "zeta", Version: "9.0.0", Tools: []plugins.Tool{c}})

	specs := r.Tools()
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if want := []string{"test.a", "test.b", "zeta.c"}; !slices.Equal(names, want) {
		t.Errorf("Tools() names = %v, want %v", names, want)
	}
	specs[0].Effects[0] = plugins.EffectExec // a caller's copy: the registry's stays
	if got := r.Tools()[0].Effects[0]; got != plugins.EffectRead {
		t.Errorf("Tools() shares its specs: effect became %q", got)
	}

	if got, ok := r.Lookup("test.b"); !ok || got != plugins.Tool(b) {
		t.Errorf("Lookup(test.b) = %v, %v", got, ok)
	}
	if _, ok := r.Lookup("test.nope"); ok {
		t.Error("Lookup(test.nope) found a tool")
	}
	for name, want := range map[string]string{"test.a": "1.2.3", "zeta.c": "9.0.0", "nope.x": ""} {
		if got := r.Version(name); got != want {
			t.Errorf("Version(%s) = %q, want %q", name, got, want)
		}
	}
}

func TestSpecIsTakenOnce(t *testing.T) {
	t.Parallel()
	tool := newTool("test.a", plugins.TierGated)
	r := mustNew(t, manifest(tool))
	tool.spec.Tier = plugins.TierAuto // the plugin changes its mind after New
	tool.spec.Effects[0] = plugins.EffectExec
	res, err := r.Resolve(t.Context(), plainCall("test.a", `{"path":"x"}`), testNow)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tier != plugins.TierGated || res.Spec.Effects[0] != plugins.EffectRead {
		t.Errorf("got tier %s effects %v, want the spec as it was at New", res.Tier, res.Spec.Effects)
	}
}
