package executor_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"buddi/core/action"
	"buddi/core/executor"
	"buddi/plugins"
	"buddi/queue"
)

// BenchmarkDecide measures approvals decided per second: the atomic claim, the decision
// event and the enqueued execution job, one transaction each.
func BenchmarkDecide(b *testing.B) {
	noop := tool("noop", plugins.TierGated)
	bb := setup(b, noop)
	ctx := context.Background()
	ids := make([]string, b.N)
	for i := range ids {
		p, err := bb.exec.Propose(ctx, call("noop", `{}`))
		if err != nil || p.Action == nil {
			b.Fatal(p, err)
		}
		ids[i] = p.Action.ID
	}
	b.ResetTimer()
	start := time.Now()
	for _, id := range ids {
		if _, err := executor.Decide(ctx, bb.pool, bb.river, nil, key, action.Decision{ActionID: id, Approve: true, Surface: "terminal"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
}

// BenchmarkApproveToExecuted measures, for a no-op tool, the time from the owner's approval
// to the tool running (p50, p99), and to the job recorded complete, through the queue as
// buddi serve runs it.
func BenchmarkApproveToExecuted(b *testing.B) {
	noop := tool("noop", plugins.TierGated)
	noop.ran = make(chan struct{}, 1)
	bb := setup(b, noop)
	ctx := context.Background()
	q, err := queue.New(bb.pool, queue.Options{Log: slog.New(slog.DiscardHandler), Register: func(w *river.Workers) error {
		return river.AddWorkerSafely(w, &executor.Worker{Executor: bb.exec})
	}})
	if err != nil {
		b.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = q.Stop(ctx, 5*time.Second) }()
	done, cancel := q.Client().Subscribe(river.EventKindJobCompleted)
	defer cancel()

	lat := make([]time.Duration, 0, b.N)
	complete := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		p, err := bb.exec.Propose(ctx, call("noop", `{}`))
		if err != nil || p.Action == nil {
			b.Fatal(p, err)
		}
		b.StartTimer()
		t0 := time.Now()
		if _, err := executor.Decide(ctx, bb.pool, bb.river, nil, key, action.Decision{ActionID: p.Action.ID, Approve: true, Surface: "dashboard"}); err != nil {
			b.Fatal(err)
		}
		<-noop.ran
		lat = append(lat, time.Since(t0))
		for ev := range done {
			if ev.Job.Kind == (executor.ExecuteArgs{}).Kind() {
				break
			}
		}
		complete = append(complete, time.Since(t0))
		if rec, _ := action.Get(ctx, bb.pool, p.Action.ID); rec.Approval.State != action.Succeeded {
			b.Fatalf("state %s, want succeeded", rec.Approval.State)
		}
	}
	b.StopTimer()
	report := func(d []time.Duration, name string) {
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, name+"-p50-ms")
		b.ReportMetric(float64(d[min(len(d)-1, len(d)*99/100)].Microseconds())/1000, name+"-p99-ms")
	}
	report(lat, "executed")
	report(complete, "completed")
}
