package dashboard

import (
	"encoding/json"
	"strings"
	"testing"

	"buddi/core/eventlog"
	"buddi/core/events"
)

// Activity tells each event in words with the fields that matter, not its JSON.
func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		kind, payload, words, detail string
	}{
		{"run.failed", `{"run_id":"0b6f…","class":"permanent","sentence":"The model refused:\n  try again.","retry":false,"cause":"400"}`,
			"a turn failed", "The model refused: try again. · 400"},
		{"tool.called", `{"run_id":"r","call_id":"c","tool":"developer.exec","agent":"developer"}`, "a tool was called", "developer · developer.exec"},
		{"run.step", `{"run_id":"r","stop_reason":"end_turn","input_tokens":10,"output_tokens":5,"attempts":1}`,
			"the model answered", "end_turn · attempts 1 · output tokens 5"},
		{"some.new_kind", `{"note":"x"}`, "some new kind", ""},
		{"buddi.started", `[]`, "buddi started", ""},
		{"incident.reported", `{"message":"` + strings.Repeat("a", 300) + `"}`, "an incident was reported", strings.Repeat("a", 119) + "…"},
	} {
		got := describe(eventlog.Event{Kind: events.Kind(c.kind), Payload: json.RawMessage(c.payload)})
		if got.Words != c.words || got.Detail != c.detail {
			t.Errorf("%s %s: got %q / %q, want %q / %q", c.kind, c.payload, got.Words, got.Detail, c.words, c.detail)
		}
	}
}

// A proposed action is told by its summary; the permission engine's trace stays in the record.
func TestDescribeProposedAction(t *testing.T) {
	got := describe(eventlog.Event{Kind: events.ActionProposed, Payload: json.RawMessage(`{"action_id":"a","tool":"developer.workspace","agent":"developer","summary":"Make /x the workspace","reason":"declared session; TierFor chose gated"}`)})
	if got.Detail != "developer · developer.workspace · Make /x the workspace" {
		t.Errorf("detail = %q", got.Detail)
	}
}
