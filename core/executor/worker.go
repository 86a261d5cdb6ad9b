package executor

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

// ExecuteArgs is the queue job that executes one approved action; there is one per action.
type ExecuteArgs struct {
	ActionID string `json:"action_id"` // the approved action to execute
	// Recovery marks a job enqueued again at start for an action whose first job died with
	// the process (that job stays "running" until River rescues it; executing twice is safe,
	// dispatching twice cannot happen). Zero for the job the decision enqueues.
	Recovery int64 `json:"recovery,omitempty"`
}

// Kind is River's name for the job.
func (ExecuteArgs) Kind() string { return "action.execute" }

// InsertOpts makes the job unique per action.
func (ExecuteArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}, MaxAttempts: 5}
}

// Worker runs ExecuteArgs jobs with e.
type Worker struct {
	river.WorkerDefaults[ExecuteArgs]
	Executor *Executor // executes each job's approved action
}

// Timeout is longer than any tool's own deadline (the registry enforces that one, at most
// the longest a tool declares), so the job never cuts a running effect short.
func (w *Worker) Timeout(*river.Job[ExecuteArgs]) time.Duration { return JobTimeout }

// JobTimeout bounds one execute job: above the longest tool deadline (developer.run, 31
// minutes). The queue's rescue of stuck jobs must wait longer than this.
const JobTimeout = 40 * time.Minute

// Work executes the action. A rerun of the job (after a crash) is safe: ExecuteApproved never
// dispatches twice.
func (w *Worker) Work(ctx context.Context, job *river.Job[ExecuteArgs]) error {
	rec, err := w.Executor.ExecuteApproved(ctx, job.Args.ActionID)
	if err != nil {
		return err
	}
	// The run that proposed it resumes with the outcome. A rerun of this job (a crash
	// between the outcome and here) enqueues it then; the job is unique per action.
	return w.Executor.persist(ctx, "the resumption of run "+rec.RunID+" after action "+rec.ID, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, w.Executor.pool, func(tx pgx.Tx) error {
			return EnqueueResume(ctx, tx, w.Executor.queue, rec)
		})
	})
}

// ExpireArgs is the periodic job that marks actions past their expiry as expired.
type ExpireArgs struct{}

// Kind is River's name for the job.
func (ExpireArgs) Kind() string { return "action.expire" }

// ExpireWorker runs ExpireArgs jobs.
type ExpireWorker struct {
	river.WorkerDefaults[ExpireArgs]
	Pool   *pgxpool.Pool // where due actions are expired, in one transaction a job
	Resume Resumer       // wakes the run of an expired action; nil wakes none
}

// Work expires what is due, with an event each.
func (w *ExpireWorker) Work(ctx context.Context, _ *river.Job[ExpireArgs]) error {
	return pgx.BeginFunc(ctx, w.Pool, func(tx pgx.Tx) error {
		return ExpireDue(ctx, tx, w.Resume)
	})
}

// ExpirePeriodically is the periodic job buddi serve runs: every minute, and at start.
func ExpirePeriodically() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(time.Minute), func() (river.JobArgs, *river.InsertOpts) {
		return ExpireArgs{}, nil
	}, &river.PeriodicJobOpts{RunOnStart: true})
}
