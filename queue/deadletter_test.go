package queue_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/internal/pgtest"
	"buddi/queue"
)

// dead puts a failed job of kind with args in the queue, finalized at.
func dead(t *testing.T, pool *pgxpool.Pool, kind, args string, at time.Time) {
	t.Helper()
	_, err := pool.Exec(context.Background(), `INSERT INTO river.river_job (kind, args, state, attempt, max_attempts, queue, priority,
		errors, finalized_at, created_at, scheduled_at)
		VALUES ($1, $2, 'discarded', 8, 8, 'runs', 1, ARRAY['{"attempt":8,"error":"anthropic: could not be reached"}'::jsonb], $3, $3, $3)`, kind, args, at)
	if err != nil {
		t.Fatal(err)
	}
}

func TestDeadLetterWatch(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	t0 := time.Now().Add(-time.Hour).UTC()
	watch := func(at time.Time) string {
		t.Helper()
		msg, err := queue.WatchDeadLetters(ctx, pool, at)
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	// An interactive run's death is the owner's to see, not an incident.
	dead(t, pool, "run.start", `{"run_id":"a","agent":"concierge","interactive":true}`, t0)
	if msg := watch(t0.Add(time.Hour)); msg != "" {
		t.Fatalf("an interactive death was reported: %s", msg)
	}
	// Unattended deaths open an incident, reported once after the window.
	dead(t, pool, "run.start", `{"run_id":"b","agent":"developer","interactive":false}`, t0.Add(time.Minute))
	dead(t, pool, "run.start", `{"run_id":"c","agent":"developer","interactive":false}`, t0.Add(2*time.Minute))
	if msg := watch(t0.Add(5 * time.Minute)); msg != "" {
		t.Fatalf("reported before the window: %s", msg)
	}
	msg := watch(t0.Add(12 * time.Minute))
	if !strings.Contains(msg, "2 jobs") || !strings.Contains(msg, "unattended runs of developer") ||
		!strings.Contains(msg, "buddi jobs --state failed") || !strings.Contains(msg, "buddi jobs retry --all") {
		t.Fatalf("the report: %q", msg)
	}
	// Once: more deaths and later looks (a restart is just another look) say nothing.
	dead(t, pool, "run.start", `{"run_id":"d","agent":"developer","interactive":false}`, t0.Add(20*time.Minute))
	for _, at := range []time.Duration{13 * time.Minute, 30 * time.Minute, 3 * time.Hour} {
		if msg := watch(t0.Add(at)); msg != "" {
			t.Fatalf("reported again at +%v: %s", at, msg)
		}
	}
	// A long gap closes it; a new death after that is a new incident.
	if msg := watch(t0.Add(20*time.Minute + queue.IncidentGap + time.Minute)); msg != "" {
		t.Fatalf("closing reported: %s", msg)
	}
	later := t0.Add(20*time.Minute + queue.IncidentGap + 2*time.Minute)
	dead(t, pool, "mail.triage", `{}`, later)
	if msg := watch(later.Add(queue.IncidentWindow)); !strings.Contains(msg, "1 job") || !strings.Contains(msg, "mail.triage jobs") {
		t.Fatalf("the second incident: %q", msg)
	}
	var opened, reported, closed int
	_ = pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE kind = 'incident.opened'), count(*) FILTER (WHERE kind = 'incident.reported'),
		count(*) FILTER (WHERE kind = 'incident.closed') FROM core.events`).Scan(&opened, &reported, &closed)
	if opened != 2 || reported != 2 || closed != 1 {
		t.Fatalf("events: opened %d reported %d closed %d", opened, reported, closed)
	}
}
