// Package queue is buddi's durable record of work: a River client on Postgres (schema
// "river") with its own connection pool, its workers, and a read of its state for
// /api/health and buddi doctor.
package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"buddi/internal/logfile"
	"buddi/migrations"
)

// Options configure the client. The zero value of each field works.
type Options struct {
	// Log receives River's lines, tagged service=queue; River's info lines come at debug.
	Log *slog.Logger
	// MaxWorkers bounds concurrent jobs on the default queue. Default 10.
	MaxWorkers int
	// Register adds the workers of other packages; the probe worker is always present.
	Register func(*river.Workers) error
	// Periodic are jobs inserted on a timer while this client leads (sweeps, not records:
	// River keeps their schedule in memory).
	Periodic []*river.PeriodicJob
	// Queues are more queues to work, by name, with their most concurrent jobs (runs work on
	// their own queue, so a burst of conversations never starves the approvals' executions).
	Queues map[string]int
	// Plugins wrap every job a worker takes (buddi's metrics, and traces when configured).
	Plugins []rivertype.Plugin
	// RescueAfter is how long a running job may go without finishing before River takes its
	// worker for dead and runs it again. Default 45 minutes; tests shorten it.
	RescueAfter time.Duration
}

// How the queues learn of work. Every insert notifies the queue's producers (LISTEN/NOTIFY
// on River's own connection), so a producer fetches when told and polls only to catch what
// a lost notification missed: an idle buddi makes next to no transactions. Before, a 100 ms
// poll on each queue was 20 of the 21 transactions a second that an idle buddi made.
const (
	// FetchPollInterval is how often an idle queue looks for work it was not told of.
	FetchPollInterval = 5 * time.Second
	// FetchCooldown is the least time between two fetches of a queue: a notification after a
	// quiet spell is fetched at once (an approval's execution does not wait), and those of a
	// burst of inserts become one fetch at the end of it. A turn does not wait for its job
	// (the run is delivered to its conversation's actor as the message is stored), so fewer
	// fetches are worth more than a quicker one: at 10 ms each turn cost about one more
	// write and WAL flush (BenchmarkTurns, one conversation: 6.1 writes a turn, 5.2 at 100 ms).
	FetchCooldown = 100 * time.Millisecond
)

// queueConfig is a queue of at most n concurrent jobs.
func queueConfig(n int) river.QueueConfig {
	return river.QueueConfig{MaxWorkers: n, FetchCooldown: FetchCooldown, FetchPollInterval: FetchPollInterval}
}

// Queue owns the River client.
type Queue struct {
	client *river.Client[pgx.Tx]
	log    *slog.Logger
}

// New builds the client on pool, which should be River's own (leader election times out on a
// pool shared with busy application code). Nothing runs until Start.
func New(pool *pgxpool.Pool, opts Options) (*Queue, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("service", "queue")
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &probeWorker{pool: pool}); err != nil {
		return nil, fmt.Errorf("queue: add probe worker: %w", err)
	}
	if opts.Register != nil {
		if err := opts.Register(workers); err != nil {
			return nil, fmt.Errorf("queue: add workers: %w", err)
		}
	}
	if opts.MaxWorkers == 0 {
		opts.MaxWorkers = 10
	}
	queues := map[string]river.QueueConfig{river.QueueDefault: queueConfig(opts.MaxWorkers)}
	for name, n := range opts.Queues {
		queues[name] = queueConfig(n)
	}
	if opts.RescueAfter == 0 {
		opts.RescueAfter = 45 * time.Minute
	}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Schema:       migrations.RiverSchema,
		Logger:       slog.New(logfile.Demote(log.Handler())),
		Queues:       queues,
		Workers:      workers,
		PeriodicJobs: opts.Periodic,
		Plugins:      opts.Plugins,
		// A job's lease: a worker that died is rescued after this long. Each kind sets its own
		// Timeout shorter than this (the longest, an approved action's execution, is 40 min).
		RescueStuckJobsAfter: opts.RescueAfter,
		// The client's own cooldown is also the window in which its inserts share one
		// notification (see InsertOnly): the least, so each insert wakes the queue. The
		// queues' fetches have their own (queueConfig).
		FetchCooldown:     river.FetchCooldownMin,
		FetchPollInterval: FetchPollInterval,
		JobTimeout:        5 * time.Minute,
		// No reindexer: REINDEX needs the index's owner, and buddi's process connects as the
		// application role, which owns nothing (pgcluster.App). The other maintenance services
		// (cleaner, rescuer, scheduler, periodic jobs, queue cleaner, leader election) need no
		// more than reading and writing River's tables. River's tables stay small (completed
		// jobs are removed after a day), and autovacuum keeps their indexes in trim.
		ReindexerIndexNames: []string{},
	})
	if err != nil {
		return nil, fmt.Errorf("queue: new client: %w", err)
	}
	return &Queue{client: client, log: log}, nil
}

// Client is the River client, for inserting jobs.
func (q *Queue) Client() *river.Client[pgx.Tx] { return q.client }

// Start begins fetching and working jobs.
func (q *Queue) Start(ctx context.Context) error {
	if err := q.client.Start(ctx); err != nil {
		return fmt.Errorf("queue: start: %w", err)
	}
	return nil
}

// Stop stops taking new jobs and lets running ones finish until ctx ends; then it cancels
// what still runs and waits up to grace for the workers to return.
func (q *Queue) Stop(ctx context.Context, grace time.Duration) error {
	err := q.client.Stop(ctx)
	if err == nil {
		return nil
	}
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("queue: stop: %w", err)
	}
	q.log.Warn("jobs still running at the stop deadline; cancelling them")
	cctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := q.client.StopAndCancel(cctx); err != nil {
		return fmt.Errorf("queue: stop and cancel: %w", err)
	}
	return nil
}

// InsertOnly returns a client that can only insert jobs (buddi serve's code and the CLI
// insert through one): each insert notifies its queue, so the jobs are worked at once by
// the buddi serving, which polls only seconds apart.
func InsertOnly(pool *pgxpool.Pool) (*river.Client[pgx.Tx], error) {
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Schema: migrations.RiverSchema,
		// River notifies a queue of a client's inserts at most once per this client's
		// FetchCooldown (100 ms by default): an insert soon after another was not announced,
		// and waited for the next poll. The least cooldown announces each insert.
		FetchCooldown: river.FetchCooldownMin,
	})
	if err != nil {
		return nil, fmt.Errorf("queue: insert-only client: %w", err)
	}
	return client, nil
}
