package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"buddi/core/action"
	"buddi/core/eventlog"
	"buddi/core/events"
)

// Recover runs at start, before the queue fetches a job, when the data directory's lock
// proves that no other buddi works: it settles what a stopped buddi left in the middle, so
// that a second call finds nothing and writes nothing.
//
// An action it left executing is decided by its ledger: with a dispatched attempt it becomes
// unknown, for the owner's review, and the run that waited on it resumes now; with none,
// nothing left the machine, so it goes back to approved and runs again. Each action.execute
// job it left running is ended (it would count as running until River's rescue, an hour on,
// and be worked a second time then), and its action carries on: an approved one gets a job
// of its own, a finished one the resumption of its run. The auto and session calls it left
// dispatched become unknown, each with an action.unknown event. It returns how many effects
// it marked unknown.
func (e *Executor) Recover(ctx context.Context) (int, error) {
	dead, err := deadJobs(ctx, e.pool, "action.execute", "action_id")
	if err != nil {
		return 0, fmt.Errorf("recover action jobs: %w", err)
	}
	rows, err := e.pool.Query(ctx, `SELECT action_id::text FROM core.approvals WHERE state = 'executing' ORDER BY action_id`)
	if err != nil {
		return 0, fmt.Errorf("recover executing actions: %w", err)
	}
	executing, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("recover executing actions: %w", err)
	}
	ids := slices.Clone(executing)
	for id := range dead.by {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)

	unknown := 0
	for _, id := range ids {
		var marked bool
		err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
			var err error
			marked, err = e.recoverAction(ctx, tx, id, dead.by[id])
			return err
		})
		if err != nil {
			return unknown, fmt.Errorf("recover action %s: %w", id, err)
		}
		if marked {
			unknown++
		}
	}
	if len(dead.unreadable) > 0 {
		err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
			return endDeadJobs(ctx, tx, dead.unreadable, "buddi stopped while it ran, and its arguments name no action")
		})
		if err != nil {
			return unknown, fmt.Errorf("recover action jobs: %w", err)
		}
	}
	calls, err := e.recoverDirectCalls(ctx)
	return unknown + calls, err
}

// recoverAction settles one action a stopped buddi left executing, or whose jobs it left
// running, in tx; it reports whether the action became unknown.
func (e *Executor) recoverAction(ctx context.Context, tx pgx.Tx, id string, jobs []int64) (bool, error) {
	var state action.State
	err := tx.QueryRow(ctx, `SELECT state FROM core.approvals WHERE action_id = $1 FOR UPDATE`, id).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, endDeadJobs(ctx, tx, jobs, "buddi stopped while it ran, and its action does not exist")
	}
	if err != nil {
		return false, err
	}
	if err := endDeadJobs(ctx, tx, jobs, "buddi stopped while it ran; the action was settled at the next start"); err != nil {
		return false, err
	}
	switch state {
	case action.Executing:
		dispatched, err := e.settleDispatched(ctx, tx, id)
		if err != nil || dispatched {
			return dispatched, err
		}
		if _, err := action.Transition(ctx, tx, id, action.Executing, action.Approved, "buddi stopped before its effect began; it runs again", nil); err != nil {
			return false, err
		}
		return false, e.enqueueRecovery(ctx, tx, id)
	case action.Approved: // its job died before it claimed the action
		if len(jobs) == 0 {
			return false, nil
		}
		return false, e.enqueueRecovery(ctx, tx, id)
	case action.Pending:
		return false, nil
	}
	// Finished: its job died between the outcome and the resumption of its run.
	rec, err := action.Get(ctx, tx, id)
	if err != nil {
		return false, err
	}
	return false, EnqueueResume(ctx, tx, e.queue, rec)
}

// settleDispatched decides an executing action by its ledger, in tx, which holds the
// approval's lock: with a dispatched attempt, whose execution is taken for dead, the attempt
// and the action become unknown and the run that waits on it resumes now, told so; it reports
// whether it did.
func (e *Executor) settleDispatched(ctx context.Context, tx pgx.Tx, id string) (bool, error) {
	dispatched, err := markDispatchedUnknown(ctx, tx, id)
	if err != nil || !dispatched {
		return false, err
	}
	if _, err = action.Transition(ctx, tx, id, action.Executing, action.Unknown,
		"buddi stopped after the effect was dispatched: it may or may not have happened", nil); err != nil {
		return false, err
	}
	rec, err := action.Get(ctx, tx, id)
	if err != nil {
		return false, err
	}
	return true, EnqueueResume(ctx, tx, e.queue, rec)
}

// enqueueRecovery gives an approved action a job of its own: its first one is ended, and,
// unique per action, would make a plain enqueue a duplicate.
func (e *Executor) enqueueRecovery(ctx context.Context, tx pgx.Tx, id string) error {
	if _, err := e.queue.InsertTx(ctx, tx, ExecuteArgs{ActionID: id, Recovery: e.Now().UnixNano()}, nil); err != nil {
		return fmt.Errorf("enqueue recovery of action %s: %w", id, err)
	}
	return nil
}

// recoverDirectCalls marks the auto and session calls a stopped buddi left dispatched
// unknown, each with an action.unknown event, in one transaction; it returns how many.
func (e *Executor) recoverDirectCalls(ctx context.Context) (int, error) {
	const why = "buddi stopped while the call ran: it may or may not have happened"
	n := 0
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			UPDATE core.effect_attempts SET state = 'unknown', finished_at = now(), error = $1
			WHERE action_id IS NULL AND state = 'dispatched'
			RETURNING id, tool, run_id, call_id`, why)
		if err != nil {
			return err
		}
		type call struct {
			id                  int64
			tool, runID, callID string
		}
		calls, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (call, error) {
			var c call
			err := r.Scan(&c.id, &c.tool, &c.runID, &c.callID)
			return c, err
		})
		if err != nil {
			return err
		}
		for _, c := range calls {
			var conv string
			err := tx.QueryRow(ctx, `SELECT COALESCE(conversation_id::text, '') FROM core.events WHERE kind = $3
				AND payload->>'run_id' = $1 AND payload->>'call_id' = $2 ORDER BY id DESC LIMIT 1`, c.runID, c.callID, events.ToolCalled).Scan(&conv)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			if err := appendUnknownCall(ctx, tx, conv, c.id, c.tool, c.runID, c.callID, why); err != nil {
				return err
			}
		}
		n = len(calls)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("recover direct calls: %w", err)
	}
	return n, nil
}

// deadSet is the jobs of one kind that a stopped buddi left running, by the argument that
// names what they work on.
type deadSet struct {
	by         map[string][]int64
	unreadable []int64 // jobs whose argument is missing
}

// deadJobs lists the jobs of kind left running, by their argument arg.
func deadJobs(ctx context.Context, q eventlog.Querier, kind, arg string) (deadSet, error) {
	rows, err := q.Query(ctx, `SELECT id, COALESCE(args->>$2, '') FROM river.river_job WHERE state = 'running' AND kind = $1 ORDER BY id`, kind, arg)
	if err != nil {
		return deadSet{}, err
	}
	d := deadSet{by: map[string][]int64{}}
	var id int64
	var key string
	_, err = pgx.ForEachRow(rows, []any{&id, &key}, func() error {
		if key == "" {
			d.unreadable = append(d.unreadable, id)
		} else {
			d.by[key] = append(d.by[key], id)
		}
		return nil
	})
	return d, err
}

// EndDeadJob ends a queue job that a stopped buddi left running, in tx: it is marked
// completed, its work carried on by whoever recovered it, with why in its metadata
// ("recovered"). Left running, it would count as running until River's rescue, and then be
// worked a second time. Call it only when no process can be working the job: at start,
// under the data directory's lock, before the queue fetches. It reports whether the job was
// still running.
func EndDeadJob(ctx context.Context, tx pgx.Tx, id int64, why string) (bool, error) {
	tag, err := tx.Exec(ctx, `UPDATE river.river_job SET state = 'completed', finalized_at = now(),
		metadata = metadata || jsonb_build_object('recovered', $2::text)
		WHERE id = $1 AND state = 'running'`, id, why)
	if err != nil {
		return false, fmt.Errorf("end the dead job %d: %w", id, err)
	}
	return tag.RowsAffected() > 0, nil
}

func endDeadJobs(ctx context.Context, tx pgx.Tx, ids []int64, why string) error {
	for _, id := range ids {
		if _, err := EndDeadJob(ctx, tx, id, why); err != nil {
			return err
		}
	}
	return nil
}
