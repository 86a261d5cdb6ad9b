package scheduler_test

import (
	"context"
	"testing"
	"time"

	"buddi/internal/pgtest"
	"buddi/scheduler"
)

// BenchmarkSettleAfterAWeekAsleep materialises an every-minute mission after a simulated
// week asleep (10,000 instants, the most one pass writes) under each misfire policy, and
// reports the time one pass takes to settle them.
func BenchmarkSettleAfterAWeekAsleep(b *testing.B) {
	ctx := context.Background()
	for _, policy := range []string{scheduler.ReplayAll, scheduler.Coalesce, scheduler.LatestOnly, scheduler.SkipAfterDeadline} {
		b.Run(policy, func(b *testing.B) {
			pool := pgtest.Pool(b)
			st := &scheduler.Store{Pool: pool}
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				m, err := st.Add(ctx, scheduler.Mission{Name: policy, Agent: "a", Prompt: "p", Cron: "* * * * *", Misfire: policy})
				if err != nil {
					b.Fatal(err)
				}
				wake := time.Now().Truncate(time.Minute)
				if _, err := pool.Exec(ctx, `UPDATE core.missions SET created_at = $2, enabled = (id = $1)`, m.ID, wake.Add(-10000*time.Minute)); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				t0 := time.Now()
				written, _, err := st.Materialise(ctx, wake)
				total += time.Since(t0)
				if err != nil || written != 10000 {
					b.Fatalf("wrote %d: %v", written, err)
				}
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/settle")
		})
	}
}
