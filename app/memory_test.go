package app

import (
	"context"
	"strings"
	"testing"

	"buddi/internal/pgtest"
	"buddi/migrations"
	"buddi/plugins/memory"
)

// A note kept before memory refused characters no reader can see is shown on the Memory page
// with each such character as a visible mark, so the owner reads all that later runs will.
func TestTheMemoryPageShowsWhatNoReaderCouldSee(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := migrations.Up(ctx, pool, nil, migrations.Set{Schema: memory.Schema, FS: memory.Migrations()}); err != nil {
		t.Fatal(err)
	}
	hidden := "The owner likes tea.\U000E0061\U000E006C\u200b"
	if _, err := pool.Exec(ctx, `INSERT INTO memory.notes (agent, body, folded, scope, conversation_id, run_id, created_at)
		VALUES ('concierge', $1, lower($1), 'private', 'c1', 'r1', now())`, hidden); err != nil {
		t.Fatal(err)
	}
	page := memoryPage{store: memory.NewStore(pool)}
	notes, err := page.MemoryNotes(ctx, "", 10)
	if err != nil || len(notes) != 1 {
		t.Fatalf("notes %v, %v", notes, err)
	}
	if got := notes[0].Text; got != "The owner likes tea.‹U+E0061›‹U+E006C›‹U+200B›" || strings.ContainsRune(got, 0xE0061) {
		t.Errorf("the page shows %+q", got)
	}
}
