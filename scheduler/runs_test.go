package scheduler_test

import (
	"context"
	"testing"
	"time"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/internal/pgtest"
	"buddi/scheduler"
)

// A mission's runs come newest first, each with the first line of its run's report (and none
// for a run that reported nothing or has not started).
func TestRunsCarryTheReportsFirstLine(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	st := &scheduler.Store{Pool: pool}
	m, err := st.Add(ctx, scheduler.Mission{Name: "news", Agent: "concierge", Prompt: "Brief me.", Cron: "0 9 * * *", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	for i, run := range []string{"run-a", "run-b", ""} {
		if _, err := pool.Exec(ctx, `INSERT INTO core.occurrences (mission_id, schedule_revision, instant, state, run_id) VALUES ($1, 1, $2, $3, $4)`,
			m.ID, base.AddDate(0, 0, i), map[bool]string{true: "delivered", false: "pending"}[run != ""], run); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eventlog.Append(ctx, pool, events.MissionReported, "", events.MissionReportedPayload{RunID: "run-a", Report: "\n  **Rain** at noon.  \nTake a coat."}); err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(ctx, m.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 || runs[0].RunID != "" || runs[1].RunID != "run-b" || runs[2].RunID != "run-a" {
		t.Fatalf("runs: %+v", runs)
	}
	if runs[2].Report != "**Rain** at noon." || runs[1].Report != "" || runs[0].Report != "" || runs[2].State != "delivered" {
		t.Fatalf("reports: %+v", runs)
	}
}
