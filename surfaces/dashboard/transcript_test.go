package dashboard

import (
	"encoding/json"
	"testing"

	"buddi/core/conversation"
)

// The transcript carries, beside each reply's text, its Markdown rendered and sanitised; the
// owner's words, tool results and calls pass as stored.
func TestTranscriptCarriesSanitisedHTML(t *testing.T) {
	in := []conversation.Entry{
		{ID: 1, Kind: conversation.KindUser, Body: json.RawMessage(`{"text":"**not rendered**"}`)},
		{ID: 2, Kind: conversation.KindAssistant, Body: json.RawMessage(`{"parts":[{"type":"text","text":"**hi** <script>alert(1)</script> [x](javascript:alert(1))"},{"type":"tool_call","id":"c1","name":"t","args":{"a":1}}]}`)},
		{ID: 3, Kind: conversation.KindTool, Body: json.RawMessage(`{"call_id":"c1","tool":"t","content":"*raw*"}`)},
		{ID: 4, Kind: conversation.KindAssistant, Body: json.RawMessage(`"not an object"`)},
	}
	out := withHTML(in)
	if string(out[0].Body) != string(in[0].Body) || string(out[2].Body) != string(in[2].Body) || string(out[3].Body) != string(in[3].Body) {
		t.Fatalf("entries other than replies changed: %s / %s / %s", out[0].Body, out[2].Body, out[3].Body)
	}
	var msg struct {
		Parts []map[string]any `json:"parts"`
	}
	if err := json.Unmarshal(out[1].Body, &msg); err != nil {
		t.Fatal(err)
	}
	text, call := msg.Parts[0], msg.Parts[1]
	if text["text"] != "**hi** <script>alert(1)</script> [x](javascript:alert(1))" {
		t.Errorf("the text changed: %v", text["text"])
	}
	if got, want := text["html"], "<p><strong>hi</strong> alert(1) x</p>\n"; got != want {
		t.Errorf("html = %q, want %q", got, want)
	}
	if _, ok := call["html"]; ok || call["name"] != "t" || call["args"].(map[string]any)["a"] != 1.0 {
		t.Errorf("the call changed: %v", call)
	}
}
