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

	"buddi/migrations"
)

// Options configure the client. The zero value of each field works.
type Options struct {
	// Log receives River's lines, tagged service=queue.
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
	// RescueAfter is how long a running job may go without finishing before River takes its
	// worker for dead and runs it again. Default 45 minutes; tests shorten it.
	RescueAfter time.Duration
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
	queues := map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: opts.MaxWorkers}}
	for name, n := range opts.Queues {
		queues[name] = river.QueueConfig{MaxWorkers: n}
	}
	if opts.RescueAfter == 0 {
		opts.RescueAfter = 45 * time.Minute
	}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Schema:       migrations.RiverSchema,
		Logger:       log,
		Queues:       queues,
		Workers:      workers,
		PeriodicJobs: opts.Periodic,
		// A job's lease: a worker that died is rescued after this long. Each kind sets its own
		// Timeout shorter than this (the longest, an approved action's execution, is 40 min).
		RescueStuckJobsAfter: opts.RescueAfter,
		// An approval is interactive: the owner waits for its job. River's default cooldown
		// between fetches (100 ms) would add up to that much to every approve-to-executed.
		FetchCooldown: 10 * time.Millisecond,
		// A notification of a new job can be missed or coalesced; the poll that catches it
		// then is what the owner waits for (the default 1 s made the 99th percentile of a
		// turn's first token a whole second).
		FetchPollInterval: 100 * time.Millisecond,
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

// InsertOnly returns a client that can only insert jobs (for the CLI, which works no jobs):
// they wait in the queue until buddi serve works them.
func InsertOnly(pool *pgxpool.Pool) (*river.Client[pgx.Tx], error) {
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Schema: migrations.RiverSchema})
	if err != nil {
		return nil, fmt.Errorf("queue: insert-only client: %w", err)
	}
	return client, nil
}
