package main

import (
	"testing"

	"buddi/core/views"
)

// The terminal has no canvas: buddi chat and buddi ask print a table's view as aligned
// lines, a diff as an indented block, and nothing more for a document or a failure.
func TestTerminalDegradesViews(t *testing.T) {
	table := views.Scrub(views.Resolve(views.Input{Result: views.Result{Tool: "demo.rows",
		Data: []byte(`[{"name":"api","requests":1200},{"name":"worker","requests":87}]`)}}), nil)
	if got := viewText(table); got != "  name    requests\n  api     1200\n  worker  87" {
		t.Fatalf("table:\n%q", got)
	}
	diff := views.Scrub(views.Resolve(views.Input{Result: views.Result{Tool: "demo.edit", Content: "@@ -1 +1 @@\n-old\n+new"}}), nil)
	if got := viewText(diff); got != "  @@ -1 +1 @@\n  -old\n  +new" {
		t.Fatalf("diff:\n%q", got)
	}
	failed := views.Scrub(views.Resolve(views.Input{Result: views.Result{Tool: "demo.rows", IsError: true, Content: "broke"}}), nil)
	if viewText(failed) != "" || viewText(nil) != "" {
		t.Fatal("a failure or no view printed a view")
	}
}
