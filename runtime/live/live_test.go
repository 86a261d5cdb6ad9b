package live

import (
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"buddi/core/redact"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const secret = "sk-live-0123456789abcdef"

// Every event but streamed text is scrubbed before a subscriber (or a late one, from the
// buffer) sees it: what the owner adds to a working run, a tool's answer, arguments, a card.
func TestHubScrubsEveryEvent(t *testing.T) {
	t.Parallel()
	h := &Hub{Scrub: redact.New(map[string]string{"API_KEY": secret})}
	early := h.Subscribe("c1", "")
	defer early.Close()
	events := []Event{
		{ConversationID: "c1", RunID: "r1", Type: "owner.joined", Text: "and the key is " + secret},
		{ConversationID: "c1", RunID: "r1", Type: "tool.call", Args: `{"token":"` + secret + `"}`},
		{ConversationID: "c1", RunID: "r1", Type: "tool.call", Args: "not json " + secret},
		{ConversationID: "c1", RunID: "r1", Type: "tool.result", Text: secret, Data: json.RawMessage(`{"k":"` + secret + `"}`)},
		{ConversationID: "c1", RunID: "r1", Type: "tool.result", View: json.RawMessage(`{"renderer":"table","columns":["k"],"rows":[["` + secret + `"]]}`)},
		{ConversationID: "c1", RunID: "r1", Type: "approval", Text: "send " + secret, Preview: "body: " + secret},
		{ConversationID: "c1", RunID: "r1", Type: "run.failed", Text: "failed with " + secret},
	}
	for _, ev := range events {
		h.Publish(ev)
	}
	late := h.Subscribe("c1", "r1")
	defer late.Close()
	for _, sub := range []*Subscription{early, late} {
		for range events {
			ev := <-sub.C
			b, _ := json.Marshal(ev)
			if strings.Contains(string(b), secret) {
				t.Fatalf("a %s event reached a subscriber with the secret: %s", ev.Type, b)
			}
			if !strings.Contains(string(b), "secret:API_KEY") {
				t.Fatalf("a %s event has no redaction mark: %s", ev.Type, b)
			}
		}
	}
}

// Streamed text is the run's redact.Stream's output: the hub passes it on as it is (a
// piece of it alone may look like what it is not).
func TestHubPassesStreamedText(t *testing.T) {
	t.Parallel()
	h := &Hub{Scrub: redact.New(map[string]string{"API_KEY": secret})}
	sub := h.Subscribe("c1", "")
	defer sub.Close()
	h.Publish(Event{ConversationID: "c1", RunID: "r1", Type: "text", Text: `\u0073`})
	if ev := <-sub.C; ev.Text != `\u0073` {
		t.Fatalf("streamed text changed: %q", ev.Text)
	}
}
