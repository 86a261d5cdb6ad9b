package conversation_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/conversation"
	"buddi/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// started records the runs Send and Finish start.
type started struct{ runs []string }

func (s *started) start(_ context.Context, _ pgx.Tx, _ conversation.Conversation, runID string) error {
	s.runs = append(s.runs, runID)
	return nil
}

func TestSendStartsARunAndJoinsTheOneInFlight(t *testing.T) {
	ctx := context.Background()
	st := conversation.NewStore(pgtest.Pool(t))
	var s started
	first, err := st.Send(ctx, conversation.Message{Agent: "a", Surface: "terminal", Text: "one"}, s.start)
	if err != nil {
		t.Fatal(err)
	}
	if first.Joined || first.RunID == "" || len(s.runs) != 1 {
		t.Fatalf("first message: %+v, runs %v", first, s.runs)
	}
	second, err := st.Send(ctx, conversation.Message{Agent: "a", Surface: "terminal", Text: "two"}, s.start)
	if err != nil {
		t.Fatal(err)
	}
	third, err := st.Send(ctx, conversation.Message{Agent: "a", Surface: "terminal", Text: "three"}, s.start)
	if err != nil {
		t.Fatal(err)
	}
	if !second.Joined || !third.Joined || second.RunID != first.RunID || len(s.runs) != 1 {
		t.Fatalf("messages during a run must join it: %+v %+v", second, third)
	}
	// A lease is not a delivery: released input is taken again, in order.
	leased, err := st.Lease(ctx, first.Conversation.ID, first.RunID)
	if err != nil || len(leased) != 2 || leased[0].Text != "two" || leased[1].Text != "three" {
		t.Fatalf("lease: %v %v", leased, err)
	}
	if err := st.Release(ctx, first.Conversation.ID); err != nil {
		t.Fatal(err)
	}
	// What no step took becomes the next turn, in order, with a new run.
	next, err := st.Finish(ctx, first.Conversation.ID, first.RunID, s.start)
	if err != nil || next == "" || len(s.runs) != 2 {
		t.Fatalf("finish: next %q, err %v, runs %v", next, err, s.runs)
	}
	es, err := st.Transcript(ctx, first.Conversation.ID)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, e := range es {
		texts = append(texts, string(e.Body))
	}
	got := strings.Join(texts, "|")
	two, three := strings.Index(got, `"two"`), strings.Index(got, `"three"`)
	if !strings.Contains(got, `"one"`) || two < 0 || three < 0 || two > three {
		t.Fatalf("transcript %s", got)
	}
	// The second run finishes with nothing waiting: the conversation is idle again.
	if n, err := st.Finish(ctx, first.Conversation.ID, next, s.start); err != nil || n != "" {
		t.Fatalf("finish: %q %v", n, err)
	}
	conv, _ := st.Get(ctx, first.Conversation.ID)
	if conv.ActiveRun != "" {
		t.Fatal("the conversation kept a run in flight")
	}
	// Finishing again (a rerun of the last job) changes nothing.
	if n, err := st.Finish(ctx, first.Conversation.ID, next, s.start); err != nil || n != "" || len(s.runs) != 2 {
		t.Fatalf("finish twice: %q %v", n, err)
	}
}

func TestLifetimeIsJudgedWhenTheOwnerWrites(t *testing.T) {
	ctx := context.Background()
	st := conversation.NewStore(pgtest.Pool(t))
	var s started
	now := time.Now()
	send := func(text string, at time.Time) conversation.Sent {
		t.Helper()
		sent, err := st.Send(ctx, conversation.Message{Agent: "a", Surface: "terminal", Text: text, Now: at, Rollover: time.Hour}, s.start)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Finish(ctx, sent.Conversation.ID, sent.RunID, s.start); err != nil {
			t.Fatal(err)
		}
		return sent
	}
	a := send("hello", now)
	b := send("still here", now.Add(30*time.Minute))
	if b.Conversation.ID != a.Conversation.ID || b.Ended != nil {
		t.Fatal("a conversation ended before its idle rollover")
	}
	c := send("back", now.Add(2*time.Hour))
	if c.Conversation.ID == a.Conversation.ID || c.Ended == nil || c.Ended.Reason != "idle" || c.Ended.ID != a.Conversation.ID {
		t.Fatalf("idle past the rollover: %+v", c)
	}
	if !strings.Contains(c.Ended.CarriedOver, "quiet") {
		t.Fatalf("the owner's line: %q", c.Ended.CarriedOver)
	}
	// Size: a long transcript ends at the next message.
	long := strings.Repeat("x", conversation.MaxChars)
	d := send(long, now.Add(2*time.Hour+time.Minute))
	if d.Conversation.ID != c.Conversation.ID {
		t.Fatal("the long message itself started a new conversation")
	}
	e := send("short", now.Add(2*time.Hour+2*time.Minute))
	if e.Ended == nil || e.Ended.Reason != "size" {
		t.Fatalf("past the size: %+v", e)
	}
	// Resume carries on an ended conversation by id, without judging it.
	f, err := st.Send(ctx, conversation.Message{ConversationID: a.Conversation.ID, Resume: true, Agent: "a", Surface: "terminal", Text: "about that", Now: now.Add(5 * time.Hour)}, s.start)
	if err != nil || f.Conversation.ID != a.Conversation.ID || f.Ended != nil {
		t.Fatalf("resume: %+v %v", f, err)
	}
	// Another agent's conversation is refused.
	if _, err := st.Send(ctx, conversation.Message{ConversationID: a.Conversation.ID, Agent: "b", Surface: "terminal", Text: "hi"}, s.start); err == nil {
		t.Fatal("wrote into another agent's conversation")
	}
	if _, err := st.Send(ctx, conversation.Message{Agent: "a", Surface: "terminal", Text: "  "}, s.start); err == nil {
		t.Fatal("an empty message was accepted")
	}
}

func TestNewStartsAConversation(t *testing.T) {
	ctx := context.Background()
	st := conversation.NewStore(pgtest.Pool(t))
	var s started
	// The owner asks for a new conversation: the current one ends, saying why.
	a, err := st.Send(ctx, conversation.Message{Agent: "a", Surface: "terminal", Text: "hi", New: true}, s.start)
	if err != nil || a.Ended != nil {
		t.Fatalf("%+v %v", a, err)
	}
	if _, err := st.Finish(ctx, a.Conversation.ID, a.RunID, s.start); err != nil {
		t.Fatal(err)
	}
	b, err := st.Send(ctx, conversation.Message{Agent: "a", Surface: "terminal", Text: "fresh start", New: true}, s.start)
	if err != nil || b.Ended == nil || b.Ended.Reason != "new" || b.Conversation.ID == a.Conversation.ID {
		t.Fatalf("new: %+v %v", b, err)
	}
}

// An offer is taken once, whichever surface is first; the turn is stamped with its label.
func TestOfferIsTakenOnce(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	st := conversation.NewStore(pool)
	var s started
	first, err := st.Send(ctx, conversation.Message{Agent: "a", Surface: "terminal", Text: "hi"}, s.start)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Finish(ctx, first.Conversation.ID, first.RunID, s.start); err != nil {
		t.Fatal(err)
	}
	offers, err := conversation.AddOffers(ctx, pool, first.Conversation.ID, "a", first.RunID, []string{"Send it"}, []string{"Send the draft to Ann."})
	if err != nil || len(offers) != 1 {
		t.Fatal(offers, err)
	}
	results := make(chan error, 2)
	for _, surface := range []string{"telegram", "dashboard"} {
		go func() {
			_, err := st.TakeOffer(ctx, offers[0].ID, surface, func(context.Context, pgx.Tx, conversation.Conversation, string) error { return nil })
			results <- err
		}()
	}
	var won, lost int
	for range 2 {
		switch err := <-results; {
		case err == nil:
			won++
		case errors.Is(err, conversation.ErrOfferGone):
			lost++
		default:
			t.Fatal(err)
		}
	}
	if won != 1 || lost != 1 {
		t.Fatalf("won %d lost %d, want one each", won, lost)
	}
	es, _ := st.Transcript(ctx, first.Conversation.ID)
	last := string(es[len(es)-1].Body)
	if !strings.Contains(last, `"offer": "Send it"`) || !strings.Contains(last, "Send the draft to Ann.") {
		t.Fatalf("the taken offer's turn: %s", last)
	}
}

// Offers do not carry over: when their conversation ends they can no longer be taken.
func TestOffersEndWithTheirConversation(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	st := conversation.NewStore(pool)
	var s started
	now := time.Now()
	first, err := st.Send(ctx, conversation.Message{Agent: "a", Surface: "terminal", Text: "hi", Now: now, Rollover: time.Hour}, s.start)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = st.Finish(ctx, first.Conversation.ID, first.RunID, s.start)
	offers, _ := conversation.AddOffers(ctx, pool, first.Conversation.ID, "a", first.RunID, []string{"Go"}, []string{"go on"})
	if _, err := st.Send(ctx, conversation.Message{Agent: "a", Surface: "terminal", Text: "later", Now: now.Add(2 * time.Hour), Rollover: time.Hour}, s.start); err != nil {
		t.Fatal(err)
	}
	if _, err := st.TakeOffer(ctx, offers[0].ID, "dashboard", s.start); !errors.Is(err, conversation.ErrOfferGone) {
		t.Fatalf("an offer of an ended conversation was taken: %v", err)
	}
}

// A message that names only its conversation learns the agent in its own transaction: the
// agent's rollover is judged, and an agent that is refused writes nothing.
func TestAgentOfNamesTheConversationsAgent(t *testing.T) {
	ctx := context.Background()
	st := conversation.NewStore(pgtest.Pool(t))
	var s started
	first, err := st.Send(ctx, conversation.Message{Agent: "a", Surface: "terminal", Text: "one"}, s.start)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Finish(ctx, first.Conversation.ID, first.RunID, s.start); err != nil {
		t.Fatal(err)
	}
	gone := errors.New("no such agent")
	refused, err := st.Send(ctx, conversation.Message{ConversationID: first.Conversation.ID, Surface: "terminal", Text: "two",
		AgentOf: func(string) (time.Duration, error) { return 0, gone }}, s.start)
	if !errors.Is(err, gone) || refused.RunID != "" {
		t.Fatalf("a refused agent: sent %+v, err %v", refused, err)
	}
	if es, err := st.Transcript(ctx, first.Conversation.ID); err != nil || len(es) != 1 {
		t.Fatalf("a refused message was written: %d entries, %v", len(es), err)
	}
	// An hour later, with a rollover of a minute, the conversation has gone idle and a new
	// one of the same agent takes the message.
	var heard string
	later, err := st.Send(ctx, conversation.Message{ConversationID: first.Conversation.ID, Surface: "terminal", Text: "three", Now: time.Now().Add(time.Hour),
		AgentOf: func(agent string) (time.Duration, error) { heard = agent; return time.Minute, nil }}, s.start)
	if err != nil {
		t.Fatal(err)
	}
	if heard != "a" || later.Ended == nil || later.Ended.Reason != "idle" || later.Conversation.Agent != "a" || later.Conversation.ID == first.Conversation.ID {
		t.Fatalf("heard %q; sent %+v (ended %+v)", heard, later, later.Ended)
	}
}
