package telegram

import (
	"encoding/json"
	"strings"
	"testing"

	"buddi/core/views"
	"buddi/plugins"
)

// Telegram has no canvas: what canvas.show is given arrives as text (a table as aligned
// lines in a code block, a diff as a diff block, in HTML Telegram draws monospaced); a
// tool's document the agent did not show (what the reply says anyway), a failure, and a
// tool's table the agent did not show send nothing. Every other renderer canvas.show takes:
// canvas_shown_test.go.
func TestCanvasDegradesToText(t *testing.T) {
	shown := func(renderer, data string) json.RawMessage {
		return views.Scrub(views.Resolve(views.Input{Result: views.Result{Tool: views.ShowTool,
			Data: []byte(`{"canvas":{"renderer":"` + renderer + `","data":` + data + `}}`)}}), nil)
	}
	rows := `[{"name":"api","requests":1200},{"name":"worker","requests":87}]`
	table := shown("table", rows)
	got := canvasText(table)
	if got != "```\nname    requests\napi     1200\nworker  87\n```" {
		t.Fatalf("table as text:\n%s", got)
	}
	if html := renderHTML(got); !strings.HasPrefix(html, "<pre>") || !strings.Contains(html, "api     1200") {
		t.Fatalf("table as Telegram HTML: %s", html)
	}
	diff := shown("diff", `"@@ -1 +1 @@\n-old\n+new"`)
	if got := canvasText(diff); got != "```diff\n@@ -1 +1 @@\n-old\n+new\n```" {
		t.Fatalf("diff as text:\n%s", got)
	}
	doc := views.Scrub(views.Resolve(views.Input{Result: views.Result{Tool: "demo.read", Content: "# A\n- 1\n- 2\n- 3\n- 4\n- 5\n- 6\n- 7\n"}}), nil)
	failed := views.Scrub(views.Resolve(views.Input{Result: views.Result{Tool: "demo.rows", IsError: true, Content: "broke"}}), nil)
	if canvasText(doc) != "" || canvasText(failed) != "" || canvasText(nil) != "" {
		t.Fatal("a document, a failure or nothing was sent as a view")
	}
	// A table a tool answered with, that the agent did not choose to show, is not sent: on a
	// phone the reply leads, and detail is offered rather than given.
	inferred := views.Scrub(views.Resolve(views.Input{Result: views.Result{Tool: "demo.rows", Data: []byte(rows)}}), nil)
	described := views.Scrub(views.Resolve(views.Input{Result: views.Result{Tool: "demo.rows", Data: []byte(rows)},
		Descriptor: &plugins.ViewDescriptor{Tool: "demo.rows", Renderer: "table"}}), nil)
	if len(inferred) == 0 || len(described) == 0 || canvasText(inferred) != "" || canvasText(described) != "" {
		t.Fatalf("a table the agent did not show was sent: %q %q", canvasText(inferred), canvasText(described))
	}
}
