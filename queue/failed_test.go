package queue_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"buddi/internal/pgtest"
	"buddi/queue"
)

type flakyArgs struct{}

func (flakyArgs) Kind() string { return "test.flaky" }

// flakyWorker fails permanently until fixed.
type flakyWorker struct {
	river.WorkerDefaults[flakyArgs]
	fixed atomic.Bool
	runs  atomic.Int64
}

func (w *flakyWorker) Work(context.Context, *river.Job[flakyArgs]) error {
	w.runs.Add(1)
	if w.fixed.Load() {
		return nil
	}
	return river.JobCancel(errors.New("the upstream refused the key"))
}

// A failed job is listed; dismissed, it leaves the list (and shows with all); retried, it
// runs again and succeeds, and its dismissal is gone.
func TestFailedJobsAreDecisions(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	w := &flakyWorker{}
	q, err := queue.New(pool, queue.Options{Log: slog.New(slog.DiscardHandler), Register: func(ws *river.Workers) error {
		return river.AddWorkerSafely(ws, w)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop(context.Background(), 5*time.Second) })
	res, err := q.Client().Insert(ctx, flakyArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := res.Job.ID
	var failed []queue.FailedJob
	pgtest.Eventually(t, "the job to fail", func() bool {
		failed, err = queue.Failed(ctx, pool, false, 0)
		return err == nil && len(failed) == 1
	})
	if failed[0].ID != id || !strings.Contains(failed[0].Error, "the upstream refused the key") {
		t.Fatalf("failed job: %+v", failed[0])
	}
	if failed[0].Kind != "test.flaky" || failed[0].State != "cancelled" {
		t.Fatalf("failed job: %+v", failed[0])
	}
	if err := queue.Dismiss(ctx, pool, id, "test"); err != nil {
		t.Fatal(err)
	}
	if list, _ := queue.Failed(ctx, pool, false, 0); len(list) != 0 {
		t.Fatalf("a dismissed job is still counted: %+v", list)
	}
	if all, _ := queue.Failed(ctx, pool, true, 0); len(all) != 1 || !all[0].Dismissed {
		t.Fatalf("with all, the dismissed job: %+v", all)
	}
	if err := queue.Dismiss(ctx, pool, 999999, "test"); !errors.Is(err, queue.ErrNotFailed) {
		t.Fatalf("dismiss an unknown job: %v", err)
	}
	w.fixed.Store(true)
	if err := q.Retry(ctx, pool, id); err != nil {
		t.Fatal(err)
	}
	pgtest.Eventually(t, "the retried job to complete", func() bool {
		var state string
		_ = pool.QueryRow(ctx, `SELECT state::text FROM river.river_job WHERE id = $1`, id).Scan(&state)
		return state == "completed"
	})
	if all, _ := queue.Failed(ctx, pool, true, 0); len(all) != 0 {
		t.Fatalf("a completed job is still listed: %+v", all)
	}
	var dismissals int
	_ = pool.QueryRow(ctx, `SELECT count(*) FROM core.job_dismissals WHERE job_id = $1`, id).Scan(&dismissals)
	if dismissals != 0 {
		t.Fatal("the retry kept the dismissal")
	}
	if err := q.Retry(ctx, pool, id); !errors.Is(err, queue.ErrNotFailed) {
		t.Fatalf("retry a completed job: %v", err)
	}
}
