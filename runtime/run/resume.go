package run

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"buddi/core/executor"
)

// ResumeArgs is the job that resumes a run suspended on an action once the action has come
// to an end (decided against, expired, or executed, whatever the outcome). Core enqueues it
// through executor.Resumer, which Queue implements.
type ResumeArgs struct {
	RunID    string `json:"run_id"`    // the suspended run
	ActionID string `json:"action_id"` // the action it waited on
}

// Kind is River's name for the job.
func (ResumeArgs) Kind() string { return "run.resume" }

// InsertOpts makes the job unique per action: a second enqueue (a rerun of the execute job)
// is a no-op.
func (ResumeArgs) InsertOpts() river.InsertOpts {
	// As many attempts as the longest retry horizon of a run (unattended: 8); the run's own
	// horizon decides how many it takes.
	return river.InsertOpts{Queue: Queue, UniqueOpts: river.UniqueOpts{ByArgs: true}, MaxAttempts: 8}
}

// JobQueue is core's queue as the runtime fills it: jobs go in through the embedded
// Inserter, and a run that waited on an action resumes through the runtime's ResumeArgs job.
type JobQueue struct {
	executor.Inserter
}

var _ executor.Queue = JobQueue{}

// ResumeTx enqueues the resumption of run runID after action actionID in tx.
func (q JobQueue) ResumeTx(ctx context.Context, tx pgx.Tx, runID, actionID string) error {
	_, err := q.InsertTx(ctx, tx, ResumeArgs{RunID: runID, ActionID: actionID}, nil)
	return err // core says which run and action
}
