package queue_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"buddi/internal/pgtest"
	"buddi/migrations"
	"buddi/queue"
)

// wakeArgs is a job whose worker reports when it starts.
type wakeArgs struct {
	N int `json:"n"`
}

func (wakeArgs) Kind() string { return "test.wake" }

type wakeWorker struct {
	river.WorkerDefaults[wakeArgs]
	started chan int
}

func (w *wakeWorker) Work(_ context.Context, job *river.Job[wakeArgs]) error {
	w.started <- job.Args.N
	return nil
}

// fetchCounter counts River's fetches of available jobs on a pool.
type fetchCounter struct{ n atomic.Int64 }

func (f *fetchCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "JobGetAvailable") {
		f.n.Add(1)
	}
	return ctx
}

func (f *fetchCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// startWakeQueue starts a queue with the wake worker on its own pool, whose fetches are
// counted.
func startWakeQueue(t *testing.T, dsn string) (*queue.Queue, *wakeWorker, *fetchCounter) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	fetches := &fetchCounter{}
	cfg.ConnConfig.Tracer = fetches
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	w := &wakeWorker{started: make(chan int, 100)}
	q, err := queue.New(pool, queue.Options{Log: slog.New(slog.DiscardHandler), Register: func(ws *river.Workers) error {
		return river.AddWorkerSafely(ws, w)
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := q.Stop(ctx, 5*time.Second); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return q, w, fetches
}

// Every insert through the insert-only client (what buddi serve's code and the command line
// insert with) announces its job, however soon after another it comes: a job not announced
// waits for the next poll.
func TestEveryInsertIsAnnounced(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := pgtest.Pool(t)
	listener, err := pgx.Connect(ctx, pool.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(context.Background())
	if _, err := listener.Exec(ctx, `LISTEN "`+migrations.RiverSchema+`.river_insert"`); err != nil {
		t.Fatal(err)
	}
	client, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	const jobs = 5
	for i := range jobs {
		if _, err := client.Insert(ctx, wakeArgs{N: i}, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // inserts apart by more than River's least cooldown, as two owners' messages are
	}
	for i := range jobs {
		wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := listener.WaitForNotification(wctx)
		wcancel()
		if err != nil {
			t.Fatalf("%d of %d inserts were announced", i, jobs)
		}
	}
}

// Jobs inserted one after another are each worked at once, though the queue polls only
// seconds apart: each was announced.
func TestInsertedJobsAreWorkedWithoutWaitingForThePoll(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	_, w, _ := startWakeQueue(t, dsn)
	insertPool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer insertPool.Close()
	client, err := queue.InsertOnly(insertPool)
	if err != nil {
		t.Fatal(err)
	}
	var slowest time.Duration
	for i := range 20 {
		t0 := time.Now()
		if _, err := client.Insert(context.Background(), wakeArgs{N: i}, nil); err != nil {
			t.Fatal(err)
		}
		select {
		case n := <-w.started:
			if n != i {
				t.Fatalf("job %d started, want %d", n, i)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("job %d was not worked within 30 s", i)
		}
		slowest = max(slowest, time.Since(t0))
	}
	if slowest > queue.FetchPollInterval/2 {
		t.Fatalf("the slowest of 20 jobs took %v from insert to start: it waited for the poll (every %v)", slowest, queue.FetchPollInterval)
	}
}

// An idle queue does not look for work more often than its poll: a buddi with nothing to do
// makes next to no transactions.
func TestIdleQueueBarelyPolls(t *testing.T) {
	t.Parallel()
	_, _, fetches := startWakeQueue(t, pgtest.DSN(t))
	// The first fetch of each queue comes at the start; count from there.
	deadline := time.Now().Add(30 * time.Second)
	for fetches.n.Load() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the queue never fetched")
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}
	before := fetches.n.Load()
	const window = 3 * time.Second
	time.Sleep(window) // the measured window, nothing to wait for
	if n := fetches.n.Load() - before; n > 1 {
		t.Fatalf("an idle queue fetched %d times in %v", n, window)
	}
}
