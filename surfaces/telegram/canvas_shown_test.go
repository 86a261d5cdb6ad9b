package telegram_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"buddi/core/redact"
	"buddi/core/views"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/runtime/canvas"
	"buddi/runtime/live"
	"buddi/surfaces/telegram"
)

// tag and entity are what Telegram does not count of an HTML message: its tags, and each
// entity but as one character.
var tag, entity = regexp.MustCompile(`<[^>]*>`), regexp.MustCompile(`&[#a-z0-9]+;`)

// What the agent shows with canvas.show reaches the phone as text whatever its renderer, as
// canvas.show tells the agent it will: a document as its text (its opening lines, with a
// line saying how much was left out), code as a code block, an image as one line naming it
// and saying it is on the dashboard (never its artifact's id), a value as JSON in a code
// block. What the agent did not show (a tool's own document or image) still sends nothing,
// and a stored secret in what was shown arrives redacted.
func TestEveryShownViewReachesThePhone(t *testing.T) {
	const secret = "sk-live-canvas-0123456789abcdef"
	f := newFixture(t)
	f.hub.Scrub = redact.New(map[string]string{"API_KEY": secret})
	f.start()
	f.pair()
	f.handled(1)
	f.push(text(owner, ownerChat, "private", "show me the notes"))
	run, conv := f.firstRun()

	show := func(a map[string]any) json.RawMessage {
		t.Helper()
		b, _ := json.Marshal(a)
		res, err := canvas.Manifest(f.pool).Tools[0].Execute(context.Background(),
			plugins.Call{Tool: views.ShowTool, Args: b, Agent: "helper", ConversationID: conv, RunID: run, CallID: "c", Surface: "telegram"}, nil)
		if err != nil || res.IsError {
			t.Fatalf("canvas.show %s: %v %+v", b, err, res)
		}
		return views.Scrub(views.Resolve(views.Input{Result: views.Result{Tool: views.ShowTool, Content: res.Text, Data: res.Data}}), nil)
	}
	publish := func(tool string, view json.RawMessage) {
		if len(view) == 0 {
			t.Fatalf("%s has no view", tool)
		}
		f.hub.Publish(live.Event{ConversationID: conv, RunID: run, Type: "tool.result", Tool: tool, View: view})
	}
	var doc strings.Builder
	doc.WriteString("# Meeting notes\n\nThe key is " + secret + ".\n")
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&doc, "- point %d\n", i)
	}
	publish(views.ShowTool, show(map[string]any{"renderer": "document", "title": "Notes", "data": doc.String()}))
	publish(views.ShowTool, show(map[string]any{"renderer": "terminal", "title": "Build", "data": "go build ./...\nok  buddi/core 0.4s"}))
	publish(views.ShowTool, show(map[string]any{"renderer": "image", "title": "Q3 revenue chart", "data": map[string]any{"artifact": "00000000-0000-4000-8000-0000000000aa"}}))
	publish(views.ShowTool, show(map[string]any{"renderer": "structured", "title": "Answer", "data": 42}))
	// An image's title is its name as written: Markdown in it makes no link.
	publish(views.ShowTool, show(map[string]any{"renderer": "image", "title": "See [here](https://example.com/x) & <b>", "data": map[string]any{"artifact": "00000000-0000-4000-8000-0000000000aa"}}))
	// A value too long for a message is cut to one.
	publish(views.ShowTool, show(map[string]any{"renderer": "structured", "title": "Long", "data": []string{strings.Repeat("y", 9000)}}))
	// A tool's own document and image, not shown by the agent: nothing is sent.
	publish("demo.read", views.Scrub(views.Resolve(views.Input{Result: views.Result{Tool: "demo.read", Content: "# Unshown\n- 1\n- 2\n- 3\n- 4\n- 5\n- 6\n- 7\n"}}), nil))
	publish("demo.draw", views.Scrub(views.Resolve(views.Input{Result: views.Result{Tool: "demo.draw", Data: []byte(`{"artifact":"00000000-0000-4000-8000-0000000000bb"}`)},
		Descriptor: &plugins.ViewDescriptor{Tool: "demo.draw", Renderer: "image"}}), nil))
	f.hub.Publish(live.Event{ConversationID: conv, RunID: run, Type: "run.finished"})
	pgtest.Eventually(t, "the run's end", func() bool {
		for _, e := range f.api.Calls("editMessageText") {
			if e.Params["text"] == "Done." {
				return true
			}
		}
		return false
	})

	sent := sentTexts(f.api.Calls("sendMessage"))[2:] // after "Paired" and "Working on it…"
	if len(sent) != 6 {
		t.Fatalf("sent %d views, want the 6 the agent showed:\n%s", len(sent), strings.Join(sent, "\n---\n"))
	}
	for _, s := range sent {
		if strings.Contains(s, secret) || strings.Contains(s, "Unshown") || strings.Contains(s, "0000000000bb") || strings.Contains(s, "0000000000aa") {
			t.Fatalf("sent what it must not (a secret, an unshown view, an artifact's id):\n%s", s)
		}
		if n := len([]rune(entity.ReplaceAllString(tag.ReplaceAllString(s, ""), "&"))); n > telegram.MaxMessage {
			t.Fatalf("a view of %d characters", n)
		}
	}
	document, code, image, value := sent[0], sent[1], sent[2], sent[3]
	if !strings.HasPrefix(document, "Notes\n") || !strings.Contains(document, "Meeting notes") || !strings.Contains(document, "‹secret:API_KEY›") ||
		!strings.Contains(document, "point 37") || strings.Contains(document, "point 38") || !strings.Contains(document, "(23 more lines not shown)") {
		t.Fatalf("the document:\n%s", document)
	}
	if !strings.HasPrefix(code, "Build\n") || !strings.Contains(code, "<pre>go build ./...\nok  buddi/core 0.4s</pre>") {
		t.Fatalf("the code:\n%s", code)
	}
	if image != "Q3 revenue chart: an image, shown on the dashboard." {
		t.Fatalf("the image: %q", image)
	}
	if !strings.HasPrefix(value, "Answer\n") || !strings.Contains(value, "<pre>42</pre>") {
		t.Fatalf("the value:\n%s", value)
	}
	if named := sent[4]; named != "See [here](https://example.com/x) &amp; &lt;b&gt;: an image, shown on the dashboard." {
		t.Fatalf("the image with Markdown in its title: %q", named)
	}
	if long := sent[5]; !strings.HasPrefix(long, "Long\n") || !strings.Contains(long, "<pre>[&quot;yyy") || !strings.HasSuffix(long, "y…</pre>") {
		t.Fatalf("the long value: %.60s … %s", long, long[len(long)-60:])
	}
}
