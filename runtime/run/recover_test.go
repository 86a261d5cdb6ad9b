package run_test

import (
	"context"
	"testing"

	"buddi/core/events"
	"buddi/internal/pgtest"
	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
)

// A run whose job a killed buddi left running is recovered once: the next start enqueues it
// again and ends the dead job, so a second start recovers nothing and writes nothing, and
// the run then finishes.
func TestRecoverTwiceRecoversOnce(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.model.Script(pt.Reply{Stall: true}, pt.Text("Back again."))
	ctx := context.Background()
	sent := h.send("are you there")
	pgtest.Eventually(t, "the run's first step", func() bool { return len(h.model.Requests()) == 1 })
	h.stopQueue()
	// What a kill -9 leaves: the job running, worked by a process that is gone.
	if _, err := h.pool.Exec(ctx, `UPDATE river.river_job SET state = 'running', attempted_at = now(), attempted_by = ARRAY['a-dead-buddi']
		WHERE kind = 'run.start' AND args->>'run_id' = $1`, sent.RunID); err != nil {
		t.Fatal(err)
	}
	if n, err := h.runner.Recover(ctx); err != nil || n != 1 {
		t.Fatalf("first Recover = %d, %v; want 1", n, err)
	}
	var evs, jobs, running int
	count := func() {
		t.Helper()
		if err := h.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM core.events), (SELECT count(*) FROM river.river_job),
			(SELECT count(*) FROM river.river_job WHERE state = 'running')`).Scan(&evs, &jobs, &running); err != nil {
			t.Fatal(err)
		}
	}
	count()
	if running != 0 {
		t.Errorf("%d jobs still running after Recover; want the dead one ended", running)
	}
	e0, j0 := evs, jobs
	if n, err := h.runner.Recover(ctx); err != nil || n != 0 {
		t.Errorf("second Recover = %d, %v; want 0", n, err)
	}
	count()
	if evs != e0 || jobs != j0 {
		t.Errorf("the second Recover wrote %d events and %d jobs; want none", evs-e0, jobs-j0)
	}
	if got := len(h.events(events.RunRecovered, sent.RunID)); got != 1 {
		t.Errorf("run.recovered events = %d, want 1", got)
	}
	h.startQueue()
	h.await(events.RunFinished, sent.RunID)
}
