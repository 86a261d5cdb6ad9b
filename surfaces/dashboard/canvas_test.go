package dashboard

import (
	"encoding/json"
	"strings"
	"testing"

	"buddi/core/conversation"
	"buddi/core/redact"
	"buddi/plugins"
)

// Each tool answer with something to draw carries its view on the transcript API, by the
// tool's descriptor or its shape, and scrubbed: a stored secret never reaches the canvas.
func TestTranscriptCarriesViews(t *testing.T) {
	const secret = "vault-value-0123456789"
	scrub := redact.New(map[string]string{"DB_PASSWORD": secret})
	in := []conversation.Entry{
		{ID: 1, Kind: conversation.KindTool, Body: json.RawMessage(`{"call_id":"c1","tool":"demo.rows","content":"rows","data":[{"name":"prod","password":"` + secret + `"},{"name":"dev","password":"x"}]}`)},
		{ID: 2, Kind: conversation.KindTool, Body: json.RawMessage(`{"call_id":"c2","tool":"demo.write","content":"@@ -1 +1 @@\n-a\n+b\n"}`)},
		{ID: 3, Kind: conversation.KindTool, Body: json.RawMessage(`{"call_id":"c3","tool":"demo.note","content":"Saved."}`)},
		{ID: 4, Kind: conversation.KindTool, Body: json.RawMessage(`{"call_id":"c4","tool":"demo.rows","content":"it broke","is_error":true}`)},
		{ID: 5, Kind: conversation.KindUser, Body: json.RawMessage(`{"text":"hi"}`)},
	}
	descriptors := func(tool string) (plugins.ViewDescriptor, bool) {
		if tool == "demo.write" {
			return plugins.ViewDescriptor{Tool: tool, Renderer: "diff"}, true
		}
		return plugins.ViewDescriptor{}, false
	}
	out := withViews(in, descriptors, scrub)
	view := func(i int) map[string]any {
		var b struct {
			View map[string]any `json:"view"`
		}
		if err := json.Unmarshal(out[i].Body, &b); err != nil {
			t.Fatal(err)
		}
		return b.View
	}
	if v := view(0); v["renderer"] != "table" || v["source"] != "inferred" {
		t.Fatalf("rows: %v", v)
	}
	// The data is scrubbed when the store reads it (not here); the view is, on its own.
	var b map[string]json.RawMessage
	_ = json.Unmarshal(out[0].Body, &b)
	if strings.Contains(string(b["view"]), secret) || !strings.Contains(string(b["view"]), "‹secret:DB_PASSWORD›") {
		t.Fatalf("the view's cell was not scrubbed: %s", b["view"])
	}
	if v := view(1); v["renderer"] != "diff" || v["source"] != "descriptor" {
		t.Fatalf("diff: %v", v)
	}
	if v := view(2); v != nil {
		t.Fatalf("a receipt earned a tab: %v", v)
	}
	if v := view(3); v["failed"] != true {
		t.Fatalf("a failure has no tab: %v", v)
	}
	if string(out[4].Body) != `{"text":"hi"}` {
		t.Fatalf("the owner's words changed: %s", out[4].Body)
	}
}
