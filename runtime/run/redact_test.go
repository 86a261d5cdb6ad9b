package run_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/conversation"
	"buddi/core/events"
	"buddi/runtime/live"
	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
)

// collectText reads the run's live events until it finishes (or fails) and returns each
// streamed text event, in order.
func collectText(t *testing.T, sub *live.Subscription, runID string) []string {
	t.Helper()
	var texts []string
	deadline := time.After(60 * time.Second)
	for {
		select {
		case ev, ok := <-sub.C:
			if !ok {
				t.Fatal("the live subscription ended before the run did")
			}
			if ev.RunID != runID {
				continue
			}
			switch ev.Type {
			case "text":
				texts = append(texts, ev.Text)
			case "run.finished", "run.failed":
				return texts
			}
		case <-deadline:
			t.Fatalf("the run did not finish; text so far %q", texts)
		}
	}
}

// A secret the model streams split over two deltas never reaches a live watcher (the
// dashboard's websocket, the terminal, Telegram's edits all read the hub), not in one event
// and not in what the events add up to; what they add up to is what the transcript keeps.
func TestSplitSecretNeverStreams(t *testing.T) {
	for _, w := range []provider.Wire{provider.WireAnthropic, provider.WireOpenAI} {
		t.Run(string(w), func(t *testing.T) {
			h := newHarness(t, w)
			half := len(planted) / 2
			h.model.Script(pt.Text("The password is ", planted[:half], planted[half:], ", keep it safe."))
			sent := h.send("what is the password?")
			sub := h.hub.Subscribe(sent.Conversation.ID, sent.RunID)
			defer sub.Close()
			texts := collectText(t, sub, sent.RunID)
			whole := strings.Join(texts, "")
			for _, piece := range texts {
				if strings.Contains(piece, planted) {
					t.Fatalf("a live text event holds the secret: %q", piece)
				}
			}
			if strings.Contains(whole, planted) || strings.Contains(whole, planted[:half]+planted[half:]) {
				t.Fatalf("the streamed text adds up to the secret: %q", whole)
			}
			if want := "The password is ‹secret:PLANTED›, keep it safe."; whole != want {
				t.Fatalf("streamed %q, want %q", whole, want)
			}
		})
	}
}

// What the owner types is scrubbed before it is stored, as the model gets it.
func TestOwnerSecretIsNotStored(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.model.Script(pt.Text("Noted."))
	sent := h.send("the database password is " + planted)
	h.await(events.RunFinished, sent.RunID)
	rows, err := h.pool.Query(context.Background(), `SELECT body::text FROM core.messages WHERE conversation_id = $1`, sent.Conversation.ID)
	if err != nil {
		t.Fatal(err)
	}
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(bodies, "\n")
	if strings.Contains(all, planted) || !strings.Contains(all, "‹secret:PLANTED›") {
		t.Fatalf("the transcript as stored:\n%s", all)
	}
	if strings.Contains(string(h.model.Served()[0].Body), planted) {
		t.Fatal("the secret reached the model")
	}
}

// A tool whose output holds a NUL byte (PostgreSQL's jsonb and text refuse \u0000) does not
// fail the run, nor does a model that writes one: each is stored with U+FFFD in the byte's
// place (in the transcript, the result, the events), the model reads it so, and the secret
// beside it is still scrubbed.
func TestToolOutputWithNULByte(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.model.Script(pt.Tools(pt.ToolCall{ID: "call_1", Name: wire("test.binary"), Args: `{}`}), pt.Text("It is an ELF\x00 file."))
	sent := h.send("what is in the binary?")
	h.await(events.RunFinished, sent.RunID)
	if n := h.binary.runs.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want 1", n)
	}
	var answer, reply string
	for _, e := range h.transcript(sent.Conversation.ID) {
		switch e.Kind {
		case conversation.KindTool:
			answer = string(e.Body)
		case conversation.KindAssistant:
			reply = string(e.Body)
		}
	}
	if !strings.Contains(answer, "ELF\ufffd\\u0001 header, then ‹secret:PLANTED›\ufffd in the data") {
		t.Fatalf("the stored answer is %s", answer)
	}
	if !strings.Contains(reply, "It is an ELF\ufffd file.") {
		t.Fatalf("the stored reply is %s", reply)
	}
	second := string(h.model.Served()[1].Body)
	if !strings.Contains(second, `ELF\ufffd`) && !strings.Contains(second, "ELF\ufffd") {
		t.Fatalf("the model did not read the answer with U+FFFD for the NUL:\n%s", second)
	}
	if strings.Contains(second, planted) {
		t.Fatal("the secret beside the NUL reached the model")
	}
}

// A stream cut short gives back what it held: the beginning of what might have been a secret
// is shown once the stream ends (it is not one), before the next attempt's text; the
// secret in that attempt is still held and redacted.
func TestCutStreamFlushesWhatItHeld(t *testing.T) {
	h := newHarness(t, provider.WireOpenAI)
	h.model.Script(pt.Reply{Text: []string{"Half ", "an ", planted[:10]}, DropAfter: 3}, pt.Text("Whole: ", planted[:5], planted[5:], "."))
	sent := h.send("hello")
	sub := h.hub.Subscribe(sent.Conversation.ID, sent.RunID)
	defer sub.Close()
	whole := strings.Join(collectText(t, sub, sent.RunID), "")
	if want := "Half an " + planted[:10] + "Whole: ‹secret:PLANTED›."; whole != want {
		t.Fatalf("streamed %q, want %q", whole, want)
	}
}

// A secret stored while buddi runs (no reload, no refresh interval) is redacted from the
// next request on.
func TestSecretSetMidConversationIsRedactedNext(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	const late = "ghp-stored-while-running-0042"
	h.model.Script(pt.Text("First."), pt.Text("Second."))
	first := h.send("remember " + late)
	h.await(events.RunFinished, first.RunID)
	if err := h.vault.Set("GH_TOKEN", late); err != nil {
		t.Fatal(err)
	}
	second := h.send("and now?")
	h.await(events.RunFinished, second.RunID)
	body := string(h.model.Served()[1].Body)
	if strings.Contains(body, late) || !strings.Contains(body, "secret:GH_TOKEN") {
		t.Fatalf("the next request:\n%s", body)
	}
	for _, e := range h.transcript(first.Conversation.ID) {
		if strings.Contains(string(e.Body), late) {
			t.Fatalf("the transcript is served with the secret: %s", e.Body)
		}
	}
}
