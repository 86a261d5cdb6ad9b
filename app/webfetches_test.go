package app

import (
	"context"
	"testing"
	"time"

	"buddi/internal/pgtest"
	"buddi/migrations"
	"buddi/plugins/web"
	"buddi/runtime/provider"
)

// A native search is recorded in web.fetches like web.search's own: the agent, the
// conversation and run, the query as its purpose, the provider's host, and a failed one
// with the provider's error code; Activity's reader hands the rows on, newest first.
func TestNativeSearchIsRecorded(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := migrations.Up(ctx, pool, nil, migrations.Set{Schema: web.Schema, FS: web.Migrations()}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	n := nativeSearch{store: web.Store{Pool: pool}, now: func() time.Time { at = at.Add(time.Second); return at }}
	if !n.Native() || (nativeSearch{configured: true}).Native() {
		t.Fatal("native only without a backend of the owner's")
	}
	if err := n.Record(ctx, "scout", "conv-1", "run-1", provider.Search{Query: "library hours", Results: []provider.SearchHit{{URL: "https://l.example/"}}}); err != nil {
		t.Fatal(err)
	}
	if err := n.Record(ctx, "scout", "conv-1", "run-1", provider.Search{Query: "again", Error: "max_uses_exceeded"}); err != nil {
		t.Fatal(err)
	}
	rows, err := webFetches{pool: pool}.Recent(ctx, "scout", 10)
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %+v %v", rows, err)
	}
	failed, ok := rows[0], rows[1]
	if ok.Tool != "web.search" || ok.Purpose != "native search: library hours" || ok.Host != nativeSearchHost || ok.Outcome != web.OutcomeOK ||
		ok.ConversationID != "conv-1" || ok.RunID != "run-1" {
		t.Errorf("row %+v", ok)
	}
	if failed.Outcome != web.OutcomeError || failed.Reason != "The provider's search failed: max_uses_exceeded." {
		t.Errorf("row %+v", failed)
	}
}
