package registry

import (
	"errors"
	"strings"
	"testing"

	"buddi/core/views"
	"buddi/plugins"
)

// A malformed view descriptor stops the load, naming the plugin, the tool and the field.
func TestNewRefusesAMalformedViewDescriptor(t *testing.T) {
	cases := []struct {
		view  plugins.ViewDescriptor
		tool  string
		field string
	}{
		{plugins.ViewDescriptor{Tool: "test.list", Renderer: "piechart"}, "test.list", "Renderer"},
		{plugins.ViewDescriptor{Tool: "test.list", Renderer: "table", Paths: map[string]string{"rows": "items | first"}}, "test.list", "Paths[rows]"},
		{plugins.ViewDescriptor{Tool: "test.gone", Renderer: "table"}, "test.gone", "Tool"},
		{plugins.ViewDescriptor{Renderer: "table"}, "view #0", "Tool"},
	}
	for _, c := range cases {
		m := manifest(newTool("test.list", plugins.TierAuto))
		m.Views = []plugins.ViewDescriptor{c.view}
		_, err := New(m)
		var le *LoadError
		var fe *views.FieldError
		if !errors.As(err, &le) || !errors.As(err, &fe) {
			t.Fatalf("New(%+v) = %v, want a LoadError with a FieldError", c.view, err)
		}
		if le.Plugin != "test" || le.Tool != c.tool || fe.Field != c.field {
			t.Fatalf("error names plugin %q tool %q field %q (%v); want test, %s, %s", le.Plugin, le.Tool, fe.Field, err, c.tool, c.field)
		}
		for _, want := range []string{`plugin test`, c.tool, c.field} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q does not say %q", err, want)
			}
		}
	}
	// Two descriptors for one tool are refused too; a good one is kept.
	m := manifest(newTool("test.list", plugins.TierAuto))
	m.Views = []plugins.ViewDescriptor{{Tool: "test.list", Renderer: "table"}, {Tool: "test.list", Renderer: "list"}}
	if _, err := New(m); err == nil || !strings.Contains(err.Error(), "second view descriptor") {
		t.Fatalf("New = %v, want the second descriptor refused", err)
	}
	m.Views = m.Views[:1]
	r := mustNew(t, m)
	if d, ok := r.View("test.list"); !ok || d.Renderer != "table" {
		t.Fatalf("View = %+v, %v", d, ok)
	}
	if _, ok := r.View("test.other"); ok {
		t.Fatal("a view for a tool that has none")
	}
}
