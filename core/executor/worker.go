package executor

import (
	"context"

	"github.com/riverqueue/river"
)

// ExecuteArgs is the queue job that executes one approved action; there is one per action.
type ExecuteArgs struct {
	ActionID string `json:"action_id"`
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
	Executor *Executor
}

// Work executes the action. A rerun of the job (after a crash) is safe: ExecuteApproved never
// dispatches twice.
func (w *Worker) Work(ctx context.Context, job *river.Job[ExecuteArgs]) error {
	_, err := w.Executor.ExecuteApproved(ctx, job.Args.ActionID)
	return err
}
