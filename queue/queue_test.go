package queue_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/internal/pgtest"
	"buddi/queue"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestProbeRunsAndCompletesWithItsEvent(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	q, err := queue.New(pool, queue.Options{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := q.Stop(ctx, 5*time.Second); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()

	sub, unsubscribe := q.Client().Subscribe(river.EventKindJobCompleted)
	defer unsubscribe()
	res, err := q.Client().Insert(ctx, queue.ProbeArgs{Note: "hello"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-sub:
		if ev.Job.ID != res.Job.ID {
			t.Fatalf("completed job %d, want %d", ev.Job.ID, res.Job.ID)
		}
	case <-ctx.Done():
		t.Fatal("probe job did not complete")
	}

	events, err := eventlog.List(ctx, pool, eventlog.Filter{Kind: string(events.QueueProbed)})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 {
		t.Fatalf("got %d queue.probed events, want 1", len(events))
	}
	st, err := queue.ReadStats(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if st.Jobs["completed"] != 1 || st.Failed != 0 {
		t.Errorf("stats = %+v, want one completed job and none failed", st)
	}
	if len(st.Queues) != 1 || st.Queues[0].Name != "default" {
		t.Errorf("queues = %+v, want [default]", st.Queues)
	}
}

func TestReadStatsEmpty(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	st, err := queue.ReadStats(context.Background(), pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range queue.States {
		if n, ok := st.Jobs[s]; !ok || n != 0 {
			t.Errorf("state %s = %d,%v; want 0,true", s, n, ok)
		}
	}
}
