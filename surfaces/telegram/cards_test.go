package telegram_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"buddi/core/action"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/runtime/live"
	"buddi/surfaces/telegram"
	"buddi/surfaces/telegram/telegramtest"
)

// buttons are the labels and callback data of a sent or edited message's keyboard.
func buttons(t *testing.T, c telegramtest.Call) map[string]string {
	t.Helper()
	raw, _ := json.Marshal(c.Params["reply_markup"])
	var m telegram.Markup
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("reply_markup %s: %v", raw, err)
	}
	out := map[string]string{}
	for _, row := range m.InlineKeyboard {
		for _, b := range row {
			if len(b.CallbackData) > 64 {
				t.Errorf("button %q carries %d bytes of callback data, over Telegram's 64", b.Text, len(b.CallbackData))
			}
			out[b.Text] = b.CallbackData
		}
	}
	return out
}

// A card's declared choice and "remember" answered from its buttons: the card shows an option
// button for each option (the default marked), a tap on another option redraws it marked and
// decides nothing, and "Approve & remember always" approves with that pick and leaves a
// standing permission for the agent's tool.
func TestCardChoiceAndRememberFromButtons(t *testing.T) {
	f := newFixture(t)
	f.reusable = map[string]bool{"mail.send": true}
	f.start()
	f.pair()
	f.handled(1)
	ctx := context.Background()
	f.push(text(owner, ownerChat, "private", "send the mail"))
	var run string
	pgtest.Eventually(t, "the run", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.runs) == 1 {
			run = f.runs[0]
		}
		return run != ""
	})
	pgtest.Eventually(t, "Working on it…", func() bool { return len(sentTexts(f.api.Calls("sendMessage"))) == 2 })
	convs, _ := f.convs.List(ctx, "helper", 1)
	conv := convs[0].ID
	propose := func(tool string, depth int) action.Record {
		var rec action.Record
		err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
			var err error
			rec, err = action.Create(ctx, tx, testKey, action.Proposal{
				Call:    plugins.Call{Tool: tool, Args: json.RawMessage(`{}`), Agent: "helper", ConversationID: conv, RunID: run, DelegationDepth: depth},
				Version: "1",
				Envelope: plugins.Envelope{Summary: "Send the mail", Preview: "To: ann@example.com", Effects: []plugins.Effect{plugins.EffectNetWrite},
					Choices: []plugins.Choice{{Name: "from", Options: []string{"home", "work"}, Default: "home"}}},
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		f.hub.Publish(live.Event{ConversationID: conv, RunID: run, Type: "approval", Tool: tool, ActionID: rec.ID, Text: rec.Envelope.Summary, Preview: rec.Envelope.Preview})
		return rec
	}
	rec := propose("mail.send", 0)
	pgtest.Eventually(t, "the card", func() bool { return len(f.api.Calls("sendMessage")) == 3 })
	card := f.api.Calls("sendMessage")[2]
	if txt := card.Params["text"].(string); !strings.Contains(txt, "Choose from: home / work") {
		t.Errorf("the card's text names no choice:\n%s", txt)
	}
	got := buttons(t, card)
	for _, want := range []string{"✓ home", "work", "Approve", "Reject", "Approve & remember here", "Approve & remember always"} {
		if got[want] == "" {
			t.Errorf("the card has no %q button: %v", want, got)
		}
	}
	tap := func(data string) {
		f.push(map[string]any{"callback_query": map[string]any{"id": "cq", "from": map[string]any{"id": owner, "first_name": "Ann"},
			"message": map[string]any{"message_id": 9, "chat": map[string]any{"id": ownerChat, "type": "private"}, "text": "Send the mail"}, "data": data}})
	}
	// A pick redraws the card with it marked and decides nothing.
	tap(got["work"])
	f.handled(3)
	if r, _ := action.Get(ctx, f.pool, rec.ID); r.Approval.State != action.Pending {
		t.Fatalf("a pick decided: %s", r.Approval.State)
	}
	edits := f.api.Calls("editMessageText")
	redrawn := buttons(t, edits[len(edits)-1])
	if redrawn["✓ work"] == "" || redrawn["home"] == "" {
		t.Fatalf("after picking work, the buttons are %v", redrawn)
	}
	// A pick forged into a button (an option the card does not have) is refused.
	forged := "a7|" + rec.ID + "|" + telegram.Nonce("another token", rec.ID, "a7")
	tap(forged)
	f.handled(4)
	if r, _ := action.Get(ctx, f.pool, rec.ID); r.Approval.State != action.Pending {
		t.Fatalf("a forged button decided: %s", r.Approval.State)
	}
	tap(redrawn["Approve & remember always"])
	f.handled(5)
	r, _ := action.Get(ctx, f.pool, rec.ID)
	if r.Approval.State != action.Approved || r.Approval.DecidedBy != "telegram" || r.Approval.Picks["from"] != "work" {
		t.Fatalf("after Approve & remember: %s by %s with %v, want approved on telegram with from=work", r.Approval.State, r.Approval.DecidedBy, r.Approval.Picks)
	}
	standing, err := action.ListStanding(ctx, f.pool)
	if err != nil || len(standing) != 1 || standing[0].Tool != "mail.send" || standing[0].ConversationID != "" || standing[0].GrantedBy != "telegram" {
		t.Fatalf("standing permissions = %+v, %v: want mail.send always, from telegram", standing, err)
	}
	edits = f.api.Calls("editMessageText")
	if txt := edits[len(edits)-1].Params["text"].(string); !strings.Contains(txt, "Approved, from: work, remembered always here.") {
		t.Errorf("the decided card says %q", txt)
	}

	// A tool that does not allow remember: no remembering buttons.
	propose("mail.purge", 0)
	pgtest.Eventually(t, "the second card", func() bool { return len(f.api.Calls("sendMessage")) == 4 })
	second := buttons(t, f.api.Calls("sendMessage")[3])
	if second["Approve"] == "" || second["Approve & remember always"] != "" || second["Approve & remember here"] != "" {
		t.Errorf("a tool without reusable approval: buttons %v", second)
	}

	// A card raised inside a delegation: a standing permission never covers a delegate's
	// call, so it offers no remembering.
	propose("mail.send", 1)
	pgtest.Eventually(t, "the delegate's card", func() bool { return len(f.api.Calls("sendMessage")) == 5 })
	third := buttons(t, f.api.Calls("sendMessage")[4])
	if third["Approve"] == "" || third["Approve & remember always"] != "" || third["Approve & remember here"] != "" {
		t.Errorf("a delegate's card: buttons %v", third)
	}

	// /permissions lists the standing permission with a Revoke button; a forged Revoke does
	// nothing; the real one revokes it, from telegram.
	f.push(text(owner, ownerChat, "private", "/permissions"))
	pgtest.Eventually(t, "the permissions list", func() bool { return len(f.api.Calls("sendMessage")) == 6 })
	listed := f.api.Calls("sendMessage")[5]
	if txt := listed.Params["text"].(string); !strings.Contains(txt, "mail.send") || !strings.Contains(txt, "every conversation") {
		t.Errorf("the permission is listed as %q", txt)
	}
	revoke := buttons(t, listed)["Revoke"]
	if revoke == "" {
		t.Fatalf("no Revoke button: %v", buttons(t, listed))
	}
	id := strings.Split(revoke, "|")[1]
	tap("revoke|" + id + "|" + telegram.Nonce("another token", id, "revoke"))
	f.handled(7)
	if list, _ := action.ListStanding(ctx, f.pool); list[0].RevokedAt != nil {
		t.Fatal("a forged Revoke button revoked the permission")
	}
	tap(revoke)
	f.handled(8)
	if list, _ := action.ListStanding(ctx, f.pool); list[0].RevokedAt == nil || list[0].RevokedBy != "telegram" {
		t.Fatalf("after Revoke: %+v", list[0])
	}
}
