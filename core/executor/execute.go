package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"buddi/core/action"
	"buddi/core/registry"
	"buddi/internal/text"
	"buddi/metrics"
	"buddi/plugins"
)

// ExecuteApproved runs one approved action, at most once: it claims the action (approved →
// executing), rechecks a standing permission, describes the effect again and refuses a
// changed one, records the attempt in the ledger before dispatch, runs the tool under its
// timeout, and records how it ended. Run again after a crash, it finds the attempt that was
// dispatched and marks it unknown instead of dispatching twice.
func (e *Executor) ExecuteApproved(ctx context.Context, id string) (action.Record, error) {
	claimed, err := e.claim(ctx, id)
	if err != nil || !claimed {
		rec, gerr := action.Get(ctx, e.pool, id)
		if err == nil {
			err = gerr
		}
		return rec, err
	}
	rec, err := action.Get(ctx, e.pool, id)
	if err != nil {
		return rec, err
	}
	call := rec.Call()

	// Only what buddi sealed runs: an action and a decision that someone wrote into the
	// database (its administrators, the postgres account) are refused and recorded.
	if why := rec.CheckDecision(e.Seal); why != "" {
		return e.forged(ctx, rec, why)
	}
	if at := rec.Approval.DecidedAt; at != nil && e.Now().After(at.Add(action.ApprovalWindow)) {
		return e.end(ctx, rec, action.Expired, fmt.Sprintf("approved at %s, but not begun within %v of the approval (buddi was not running, or the work waited): approve it again if it is still wanted",
			at.Local().Format("15:04:05"), action.ApprovalWindow), nil)
	}
	if standing, ok := strings.CutPrefix(rec.Approval.DecidedBy, action.StandingPrefix); ok {
		if _, covered, err := action.Covering(ctx, e.pool, e.Seal, call, rec.ToolVersion); err != nil {
			return rec, err
		} else if !covered {
			return e.end(ctx, rec, action.Refused, "the standing permission "+standing+" no longer covers this call", nil)
		}
	}
	if v := e.reg.Version(rec.Tool); v != rec.ToolVersion {
		return e.end(ctx, rec, action.Refused, fmt.Sprintf("%s is now version %q, not the approved %q", rec.Tool, v, rec.ToolVersion), nil)
	}
	if e.Policy != nil { // authorization is rechecked: a deny or network rule added since approval wins
		if reason, ok := e.policyAllows(ctx, call); !ok {
			return e.end(ctx, rec, action.Refused, "the permission policy now refuses it: "+reason, nil)
		}
	}
	// Describe again exactly as at proposal: same arguments, agent and clock, no picks.
	describe := call
	describe.Picks = nil
	env, err := e.reg.Describe(ctx, describe)
	if err != nil {
		return e.end(ctx, rec, action.Refused, "the effect can no longer be described: "+refusalReason(err), nil)
	}
	redescribed := rec.Action
	redescribed.Envelope = env
	hash, err := action.Hash(e.Seal, redescribed)
	if err != nil || hash != rec.Hash {
		return e.end(ctx, rec, action.Refused, "the effect changed since it was approved", nil)
	}

	g := &gate{record: func(ctx context.Context) (int64, bool, error) { return recordAttempt(ctx, e.pool, rec) }}
	d, err := e.execute(ctx, g, call, &rec.Envelope)
	if err != nil || d.lost {
		got, gerr := action.Get(ctx, e.pool, id)
		if err == nil {
			err = gerr
		}
		return got, err // nothing ran here (another executor dispatched it)
	}
	if d.attempt == 0 && ctx.Err() != nil {
		// Stopped before its effect began: left executing with no attempt, which the job's
		// rerun (or the next start's recovery) takes for not begun, and runs again.
		return rec, fmt.Errorf("execute action %s: stopped before its effect began, so it runs again: %w", id, context.Cause(ctx))
	}
	// The effect has happened (or may have): what follows must be recorded even when the
	// job's context is cancelled now, and held until the database takes it.
	out := d.out
	state := action.State(out.Status)
	metrics.ToolCall(string(plugins.TierGated), string(state))
	reason := ""
	if out.Err != nil {
		reason = text.FirstLine(out.Err.Error())
	}
	var final action.Record
	err = e.persist(ctx, fmt.Sprintf("the outcome of action %s (%s)", rec.ID, rec.Tool), func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
			if err := e.recordOutcome(ctx, tx, rec, call, d.attempt, state, reason, out); err != nil {
				return err
			}
			var err error
			final, err = action.Get(ctx, tx, rec.ID)
			return err
		})
	})
	return final, err
}

// recordOutcome writes how the execution of rec ended: the ledger's attempt (0 when the
// effect never began), the tool.result event and the approval's state. Written again after a
// commit whose answer was lost, it finds the outcome there and changes nothing.
func (e *Executor) recordOutcome(ctx context.Context, tx pgx.Tx, rec action.Record, call plugins.Call, attempt int64, state action.State, reason string, out registry.Outcome) error {
	// Lock the approval before the attempt, in the order claim takes them.
	var current action.State
	if err := tx.QueryRow(ctx, `SELECT state FROM core.approvals WHERE action_id = $1 FOR UPDATE`, rec.ID).Scan(&current); err != nil {
		return fmt.Errorf("record outcome of %s: %w", rec.ID, err)
	}
	if attempt == 0 && current != action.Executing {
		return nil // nothing began, and only this execution ends it: the outcome is there
	}
	if attempt != 0 {
		if finished, err := finishAttempt(ctx, tx, attempt, state, reason); err != nil || !finished {
			return err
		}
	}
	if err := e.recordResult(ctx, tx, call, rec.ID, out); err != nil {
		return err
	}
	switch {
	case current == action.Executing:
		_, err := action.Transition(ctx, tx, rec.ID, current, state, reason, mustJSON(out.Result))
		return err
	case current == action.Unknown && state != action.Unknown:
		// A rerun took this execution for dead and marked it unknown; the outcome it
		// could not know has arrived, so the record tells what happened.
		reason = strings.TrimPrefix(reason+"; the outcome arrived after the action was marked unknown", "; ")
		_, err := action.Transition(ctx, tx, rec.ID, current, state, reason, mustJSON(out.Result))
		return err
	}
	e.log.Warn("an outcome arrived for an action in another state; kept in the ledger only", "action", rec.ID, "state", current, "outcome", state)
	return nil
}

// claim moves the approval to executing. An approval already executing is claimed again
// only when no attempt was dispatched (the crash came before the ledger); with one
// dispatched, the attempt and the action become unknown and claim reports false.
func (e *Executor) claim(ctx context.Context, id string) (bool, error) {
	var claimed bool
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		var state action.State
		err := tx.QueryRow(ctx, `SELECT state FROM core.approvals WHERE action_id = $1 FOR UPDATE`, id).Scan(&state)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("action %s: %w", id, action.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("claim action %s: %w", id, err)
		}
		switch state {
		case action.Approved:
			claimed, err = action.Transition(ctx, tx, id, action.Approved, action.Executing, "", nil)
			return err
		case action.Executing:
			dispatched, err := e.settleDispatched(ctx, tx, id)
			claimed = err == nil && !dispatched // the crash came before dispatch: nothing left the machine
			return err
		}
		return nil // pending, or already final: nothing to do
	})
	return claimed, err
}

// end finishes an executing action without dispatching it.
func (e *Executor) end(ctx context.Context, rec action.Record, to action.State, reason string, result []byte) (action.Record, error) {
	var final action.Record
	wctx := context.WithoutCancel(ctx)
	err := pgx.BeginFunc(wctx, e.pool, func(tx pgx.Tx) error {
		if _, err := action.Transition(wctx, tx, rec.ID, action.Executing, to, reason, result); err != nil {
			return err
		}
		var err error
		final, err = action.Get(wctx, tx, rec.ID)
		return err
	})
	e.log.Warn("action not executed", "action", rec.ID, "tool", rec.Tool, "state", to, "reason", reason)
	metrics.ToolCall(string(plugins.TierGated), string(to))
	return final, err
}

// forged refuses an executing action whose seals do not check, with an action.forged event.
func (e *Executor) forged(ctx context.Context, rec action.Record, why string) (action.Record, error) {
	wctx := context.WithoutCancel(ctx)
	var final action.Record
	err := pgx.BeginFunc(wctx, e.pool, func(tx pgx.Tx) error {
		var err error
		final, _, err = action.RefuseForged(wctx, tx, rec.ID, why)
		return err
	})
	e.log.Error("refused an action that buddi did not seal", "action", rec.ID, "tool", rec.Tool, "reason", why)
	return final, err
}

// policyAllows evaluates the permission policy for an approved call before dispatch, from
// the tool's declaration and the stored arguments (the session checks of the proposal are
// not repeated: the owner's approval stands in for the live request). Anything that cannot
// be evaluated refuses.
func (e *Executor) policyAllows(ctx context.Context, call plugins.Call) (string, bool) {
	tool, ok := e.reg.Lookup(call.Tool)
	if !ok {
		return "the tool is no longer installed", false
	}
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(call.Args))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return "its arguments cannot be read", false
	}
	_, _, err := e.policyTier(ctx, call, tool, tool.Spec(), args, plugins.TierGated)
	if err != nil {
		return refusalReason(err), false
	}
	return "", true
}

func refusalReason(err error) string {
	var ref *registry.Refusal
	if errors.As(err, &ref) {
		return ref.Reason
	}
	return text.FirstLine(err.Error())
}
