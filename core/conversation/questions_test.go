package conversation_test

import (
	"context"
	"testing"
	"time"

	"buddi/core/conversation"
	"buddi/internal/pgtest"
)

// Home's list of held questions: each live question with its text, agent, run and
// conversation, the oldest first; an expired one is not listed, and the owner's answer in the
// conversation releases its question.
func TestQuestionsListsTheLiveOnesUntilAnswered(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	st := conversation.NewStore(pool)
	var s started
	open := func(agent string) conversation.Sent {
		t.Helper()
		sent, err := st.Send(ctx, conversation.Message{Agent: agent, Surface: "dashboard", Text: "help me"}, s.start)
		if err != nil {
			t.Fatal(err)
		}
		return sent
	}
	a, b, c := open("a"), open("b"), open("c")
	if err := conversation.Ask(ctx, pool, a.Conversation.ID, "a", a.RunID, "Which branch?", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := conversation.Ask(ctx, pool, b.Conversation.ID, "b", b.RunID, "Send it now?", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := conversation.Ask(ctx, pool, c.Conversation.ID, "c", c.RunID, "Too late?", -time.Second); err != nil {
		t.Fatal(err)
	}
	qs, err := st.Questions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 {
		t.Fatalf("questions = %+v, want a's and b's (c's expired)", qs)
	}
	want := []conversation.Question{
		{ConversationID: a.Conversation.ID, Agent: "a", RunID: a.RunID, Text: "Which branch?"},
		{ConversationID: b.Conversation.ID, Agent: "b", RunID: b.RunID, Text: "Send it now?"},
	}
	for i, w := range want {
		got := qs[i]
		if got.ConversationID != w.ConversationID || got.Agent != w.Agent || got.RunID != w.RunID || got.Text != w.Text {
			t.Errorf("question %d = %+v, want %+v", i, got, w)
		}
		if got.AskedAt.IsZero() || !got.ExpiresAt.After(got.AskedAt) {
			t.Errorf("question %d asked %v, expires %v", i, got.AskedAt, got.ExpiresAt)
		}
	}
	// The owner answers a's question in its conversation (its run has finished): released.
	if _, err := st.Finish(ctx, a.Conversation.ID, a.RunID, s.start); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Send(ctx, conversation.Message{ConversationID: a.Conversation.ID, Resume: true, Agent: "a", Surface: "dashboard", Text: "main"}, s.start); err != nil {
		t.Fatal(err)
	}
	qs, err = st.Questions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 1 || qs[0].ConversationID != b.Conversation.ID {
		t.Fatalf("after the answer, questions = %+v, want only b's", qs)
	}
}
