package executor

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"buddi/core/action"
)

// ResumeArgs is the queue job that resumes a run suspended on an action, once the action has
// come to an end: decided against, expired, or executed (whatever the outcome). The runtime
// registers its worker; core only promises to enqueue it, in the transaction that ends the
// wait, once per action.
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
	return river.InsertOpts{Queue: "runs", UniqueOpts: river.UniqueOpts{ByArgs: true}, MaxAttempts: 8}
}

// EnqueueResume puts the resumption of rec's run in tx when rec belongs to a run and has
// stopped waiting; an action of no run, or one still pending, approved or executing, needs
// none.
func EnqueueResume(ctx context.Context, tx pgx.Tx, insert Inserter, rec action.Record) error {
	if rec.RunID == "" || insert == nil {
		return nil
	}
	switch rec.Approval.State {
	case action.Pending, action.Approved, action.Executing:
		return nil
	}
	if _, err := insert.InsertTx(ctx, tx, ResumeArgs{RunID: rec.RunID, ActionID: rec.ID}, nil); err != nil {
		return fmt.Errorf("enqueue the resumption of run %s after action %s: %w", rec.RunID, rec.ID, err)
	}
	return nil
}

// ExpireDue marks the due actions expired (action.ExpireDue) and enqueues the resumption of
// each one's run in the same transaction.
func ExpireDue(ctx context.Context, tx pgx.Tx, insert Inserter) error {
	ids, err := action.ExpireDue(ctx, tx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		rec, err := action.Get(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := EnqueueResume(ctx, tx, insert, rec); err != nil {
			return err
		}
	}
	return nil
}
