package executor

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"buddi/core/action"
)

// Resumer wakes a run that waited on an action once the action has come to an end: decided
// against, expired, or executed (whatever the outcome). The runtime provides it (its own
// run.resume job); core only promises to call it in the transaction that ends the wait, once
// per action.
type Resumer interface {
	// ResumeTx enqueues, as part of tx, the resumption of run runID after action actionID. A
	// second call for the same action is a no-op.
	ResumeTx(ctx context.Context, tx pgx.Tx, runID, actionID string) error
}

// Queue is where core's work goes: its own jobs (an approved action's execution) and the
// runtime's resumption of a run.
type Queue interface {
	Inserter
	Resumer
}

// EnqueueResume puts the resumption of rec's run in tx when rec belongs to a run and has
// stopped waiting; an action of no run, or one still pending, approved or executing, needs
// none.
func EnqueueResume(ctx context.Context, tx pgx.Tx, resume Resumer, rec action.Record) error {
	if rec.RunID == "" || resume == nil {
		return nil
	}
	switch rec.Approval.State {
	case action.Pending, action.Approved, action.Executing:
		return nil
	}
	if err := resume.ResumeTx(ctx, tx, rec.RunID, rec.ID); err != nil {
		return fmt.Errorf("enqueue the resumption of run %s after action %s: %w", rec.RunID, rec.ID, err)
	}
	return nil
}

// ExpireDue marks the due actions expired (action.ExpireDue) and enqueues the resumption of
// each one's run in the same transaction.
func ExpireDue(ctx context.Context, tx pgx.Tx, resume Resumer) error {
	ids, err := action.ExpireDue(ctx, tx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		rec, err := action.Get(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := EnqueueResume(ctx, tx, resume, rec); err != nil {
			return err
		}
	}
	return nil
}
