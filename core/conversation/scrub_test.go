package conversation_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/conversation"
	"buddi/core/redact"
	"buddi/internal/pgtest"
)

const ownerSecret = "sk-live-0123456789abcdef"

// stored returns every text the database holds for the conversation's owner input: the
// transcript, the input waiting for a run, the offers, the events.
func stored(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var all strings.Builder
	for _, q := range []string{
		`SELECT body::text FROM core.messages`,
		`SELECT text FROM core.pending_input`,
		`SELECT label || ' ' || prompt FROM core.offers`,
		`SELECT payload::text FROM core.events`,
	} {
		rows, err := pool.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			all.WriteString(s + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return all.String()
}

// What the owner types is scrubbed before it is written, on every path that writes it (a
// message, input that joins a working run and is then delivered or promoted, a taken offer,
// a mission's prompt), as the model gets it; and a transcript is served scrubbed, also of a
// secret stored after the message was written. A NUL is stored as U+FFFD.
func TestOwnerInputIsStoredScrubbed(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	st := conversation.NewStore(pool)
	st.Scrub = redact.New(map[string]string{"API_KEY": ownerSecret})
	var s started
	first, err := st.Send(ctx, conversation.Message{Agent: "a", Surface: "dashboard", Text: "my key is " + ownerSecret}, s.start)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"and again " + ownerSecret, "promoted " + ownerSecret + " and a NUL\x00"} {
		if _, err := st.Send(ctx, conversation.Message{Agent: "a", Surface: "telegram", Text: text}, s.start); err != nil {
			t.Fatal(err)
		}
	}
	leased, err := st.Lease(ctx, first.Conversation.ID, first.RunID)
	if err != nil || len(leased) != 2 {
		t.Fatalf("lease: %v %v", leased, err)
	}
	for _, l := range leased {
		if strings.Contains(l.Text, ownerSecret) {
			t.Fatalf("leased input holds the secret: %q", l.Text)
		}
	}
	if err := st.Release(ctx, first.Conversation.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Finish(ctx, first.Conversation.ID, first.RunID, s.start); err != nil {
		t.Fatal(err)
	}
	next, _ := st.Get(ctx, first.Conversation.ID)
	if _, err := st.Finish(ctx, first.Conversation.ID, next.ActiveRun, s.start); err != nil {
		t.Fatal(err)
	}
	offers, err := conversation.AddOffers(ctx, pool, first.Conversation.ID, "a", next.ActiveRun, []string{"Use it"}, []string{"Use the key " + ownerSecret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.TakeOffer(ctx, offers[0].ID, "dashboard", s.start); err != nil {
		t.Fatal(err)
	}
	if _, err := st.StartDetached(ctx, "a", "check "+ownerSecret+" daily", s.start, nil); err != nil {
		t.Fatal(err)
	}
	all := stored(t, pool)
	// The offer's own row is the agent's words, scrubbed by the run that wrote them; its
	// taken turn is the owner's and is checked here.
	all = strings.Replace(all, "Use it Use the key "+ownerSecret, "", 1)
	if strings.Contains(all, ownerSecret) {
		t.Fatalf("the owner's secret was stored:\n%s", all)
	}
	if n := strings.Count(all, "secret:API_KEY"); n < 5 {
		t.Fatalf("%d redaction marks stored, want one per message at least:\n%s", n, all)
	}
	if !strings.Contains(all, `a NUL\ufffd`) && !strings.Contains(all, "a NUL\ufffd") {
		t.Fatalf("the NUL was not stored as U+FFFD:\n%s", all)
	}

	// A message written before its secret was in the vault is served scrubbed.
	plain := conversation.NewStore(pool)
	later, err := plain.Send(ctx, conversation.Message{Agent: "b", Surface: "terminal", Text: "new key ghp-stored-later-4567"}, s.start)
	if err != nil {
		t.Fatal(err)
	}
	st.Scrub = redact.New(map[string]string{"API_KEY": ownerSecret, "GH_TOKEN": "ghp-stored-later-4567"})
	es, err := st.Transcript(ctx, later.Conversation.ID)
	if err != nil || len(es) != 1 {
		t.Fatal(es, err)
	}
	if body := string(es[0].Body); strings.Contains(body, "ghp-stored-later") || !strings.Contains(body, "‹secret:GH_TOKEN›") {
		t.Fatalf("served %s", body)
	}
}
