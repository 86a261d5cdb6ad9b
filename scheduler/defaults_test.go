package scheduler_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"buddi/core/conversation"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/scheduler"
)

// The weekly recap is given the digest; only a delivered recap consumes it.
func TestRecapConsumesTheDigestOnlyWhenDelivered(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	st := &scheduler.Store{Pool: pool}
	added, err := st.AddDefaults(ctx, "concierge", "Europe/Berlin")
	if err != nil || len(added) != 1 || added[0].Name != scheduler.RecapName {
		t.Fatalf("add-defaults: %+v %v", added, err)
	}
	if again, _ := st.AddDefaults(ctx, "concierge", "Europe/Berlin"); len(again) != 0 {
		t.Fatal("add-defaults added the recap twice")
	}
	if _, err := pool.Exec(ctx, `INSERT INTO core.digest_items (sentinel, key, owner_line) VALUES ('w', 'a', '2 failing tests in developer''s workspace.')`); err != nil {
		t.Fatal(err)
	}
	var got string
	runs := 0
	w := &scheduler.OccurrenceWorker{Store: st, Start: func(ctx context.Context, _ scheduler.Mission, _ scheduler.Occurrence, extra string, claim conversation.Claim) (string, error) {
		got = extra
		runs++
		runID := "run-" + string(rune('0'+runs))
		return runID, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return claim(ctx, tx, runID) })
	}}
	report := tool(scheduler.Manifest(pool), "mission.report")
	silent := tool(scheduler.Manifest(pool), "mission.silent")
	runOnce := func() string {
		t.Helper()
		occ, err := st.RunNow(ctx, added[0].ID, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		job := &river.Job[scheduler.OccurrenceArgs]{JobRow: &rivertype.JobRow{}, Args: scheduler.OccurrenceArgs{OccurrenceID: occ}}
		if err := w.Work(ctx, job); err != nil {
			t.Fatal(err)
		}
		before := runs
		if err := w.Work(ctx, job); err != nil || runs != before { // a rerun of the job starts nothing
			t.Fatalf("a rerun of the occurrence's job: %v, runs %d → %d", err, before, runs)
		}
		return "run-" + string(rune('0'+runs))
	}
	pending := func() int {
		var n int
		_ = pool.QueryRow(ctx, `SELECT count(*) FROM core.digest_items WHERE consumed_at IS NULL`).Scan(&n)
		return n
	}
	// A recap that stays silent leaves the digest pending.
	run := runOnce()
	if !strings.Contains(got, "2 failing tests") {
		t.Fatalf("the recap was not given the digest: %q", got)
	}
	if _, err := silent.Execute(ctx, plugins.Call{RunID: run, Args: json.RawMessage(`{}`)}, nil); err != nil {
		t.Fatal(err)
	}
	if pending() != 1 {
		t.Fatal("a silent recap consumed the digest")
	}
	// One that reports consumes it.
	run = runOnce()
	if _, err := report.Execute(ctx, plugins.Call{RunID: run, Args: json.RawMessage(`{"report":"Two tests fail."}`)}, nil); err != nil {
		t.Fatal(err)
	}
	if pending() != 0 {
		t.Fatal("a delivered recap left the digest pending")
	}
}

// A report from a run whose findings the owner muted since is not delivered.
func TestMutedReportIsNotDelivered(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	report := tool(scheduler.ManifestMuting(pool, func(context.Context, string) (bool, error) { return true, nil }), "mission.report")
	res, err := report.Execute(ctx, plugins.Call{RunID: "run-x", Args: json.RawMessage(`{"report":"The card was charged twice."}`)}, nil)
	if err != nil || !strings.Contains(res.Text, "Not delivered") {
		t.Fatalf("report: %+v %v", res, err)
	}
	var n int
	_ = pool.QueryRow(ctx, `SELECT count(*) FROM core.events WHERE kind = 'mission.reported'`).Scan(&n)
	if n != 0 {
		t.Fatal("a muted report was delivered")
	}
}
