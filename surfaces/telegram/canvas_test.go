package telegram

import (
	"strings"
	"testing"

	"buddi/core/views"
)

// Telegram has no canvas: a table's view arrives as aligned lines in a code block, a diff as
// a diff block, and the message is HTML Telegram draws monospaced; a document's view (what
// the reply says anyway) and a failure send nothing more.
func TestCanvasDegradesToText(t *testing.T) {
	table := views.Scrub(views.Resolve(views.Input{Result: views.Result{Tool: "demo.rows",
		Data: []byte(`[{"name":"api","requests":1200},{"name":"worker","requests":87}]`)}}), nil)
	got := canvasText(table)
	if got != "```\nname    requests\napi     1200\nworker  87\n```" {
		t.Fatalf("table as text:\n%s", got)
	}
	if html := renderHTML(got); !strings.HasPrefix(html, "<pre>") || !strings.Contains(html, "api     1200") {
		t.Fatalf("table as Telegram HTML: %s", html)
	}
	diff := views.Scrub(views.Resolve(views.Input{Result: views.Result{Tool: "demo.edit", Content: "@@ -1 +1 @@\n-old\n+new"}}), nil)
	if got := canvasText(diff); got != "```diff\n@@ -1 +1 @@\n-old\n+new\n```" {
		t.Fatalf("diff as text:\n%s", got)
	}
	doc := views.Scrub(views.Resolve(views.Input{Result: views.Result{Tool: "demo.read", Content: "# A\n- 1\n- 2\n- 3\n- 4\n- 5\n- 6\n- 7\n"}}), nil)
	failed := views.Scrub(views.Resolve(views.Input{Result: views.Result{Tool: "demo.rows", IsError: true, Content: "broke"}}), nil)
	if canvasText(doc) != "" || canvasText(failed) != "" || canvasText(nil) != "" {
		t.Fatal("a document, a failure or nothing was sent as a view")
	}
}
