package sentinels_test

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"buddi/actors"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/sentinels"
	"buddi/supervisor"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkThousandSentinels runs 1,000 sentinels with a trivial check, each due every
// period, for a few periods in real time, and reports this process's CPU as a share of one
// core and the lag from due to evaluated (from the ledger: a run's start against the previous
// start plus the period), p50 and p99. Run it with -benchtime=1x.
func BenchmarkThousandSentinels(b *testing.B) {
	const n, period, periods = 1000, 10 * time.Second, 3
	pool := pgtest.Pool(b)
	for range b.N {
		e := &sentinels.Engine{Pool: pool}
		list := make([]plugins.Sentinel, n)
		for i := range list {
			list[i] = plugins.Sentinel{ID: fmt.Sprintf("bench.%d", i), Period: period, Check: func(context.Context) ([]plugins.Finding, error) { return nil, nil }}
		}
		sys := actors.NewSystem(nil, nil)
		tree, err := supervisor.Build(sys, supervisor.Parts{})
		if err != nil {
			b.Fatal(err)
		}
		cpu0, wall0 := cpuTime(), time.Now()
		if err := tree.Start(supervisor.Services{Sentinels: sentinels.Children(e, list, period)}); err != nil {
			b.Fatal(err)
		}
		time.Sleep(periods*period + period/2) // the benchmark's own duration: it measures a steady state over time
		cpu, wall := cpuTime()-cpu0, time.Since(wall0)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_ = sys.Shutdown(ctx)
		cancel()
		rows, err := pool.Query(context.Background(), `SELECT started_at - lag(started_at) OVER (PARTITION BY sentinel ORDER BY started_at)
			FROM core.sentinel_runs WHERE sentinel LIKE 'bench.%'`)
		if err != nil {
			b.Fatal(err)
		}
		var lags []time.Duration
		for rows.Next() {
			var gap *time.Duration
			if err := rows.Scan(&gap); err != nil {
				b.Fatal(err)
			}
			if gap != nil {
				lags = append(lags, *gap-period)
			}
		}
		rows.Close()
		slices.Sort(lags)
		if len(lags) == 0 {
			b.Fatal("no second runs")
		}
		p := func(q int) time.Duration { return lags[min(len(lags)-1, len(lags)*q/100)] }
		b.ReportMetric(float64(cpu)/float64(wall)*100, "cpu-%-of-one-core")
		b.ReportMetric(float64(p(50).Microseconds())/1000, "lag-p50-ms")
		b.ReportMetric(float64(p(99).Microseconds())/1000, "lag-p99-ms")
		b.Logf("%d sentinels, %v period: %d ticks measured; CPU %.1f%% of one core; lag p50 %v p99 %v", n, period, len(lags), float64(cpu)/float64(wall)*100, p(50), p(99))
		if _, err := pool.Exec(context.Background(), `DELETE FROM core.sentinel_runs WHERE sentinel LIKE 'bench.%'`); err != nil {
			b.Fatal(err)
		}
	}
}
