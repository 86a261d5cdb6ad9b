package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/action"
	"buddi/core/redact"
	"buddi/plugins"
)

// recordAttempt writes the exact envelope to the effect ledger and commits it before the
// tool is dispatched. An action is dispatched once: when its attempt exists already (another
// executor won the race), first is false and nothing may be dispatched.
func recordAttempt(ctx context.Context, pool *pgxpool.Pool, rec action.Record) (id int64, first bool, err error) {
	env, err := json.Marshal(rec.Envelope)
	if err != nil {
		return 0, false, fmt.Errorf("ledger: envelope of %s: %w", rec.ID, err)
	}
	err = pool.QueryRow(ctx, `
		INSERT INTO core.effect_attempts (action_id, tool, envelope, hash) VALUES ($1, $2, $3, $4)
		ON CONFLICT (action_id) WHERE action_id IS NOT NULL DO NOTHING
		RETURNING id`,
		rec.ID, rec.Tool, string(env), rec.Hash).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("ledger: record attempt for %s: %w", rec.ID, err)
	}
	return id, true, nil
}

// recordDirectAttempt records an auto or session call in the ledger before it runs, so one
// that times out leaves an unknown attempt to review like an approved action's.
func recordDirectAttempt(ctx context.Context, pool *pgxpool.Pool, call plugins.Call) (int64, error) {
	var id int64
	err := pool.QueryRow(ctx, `
		INSERT INTO core.effect_attempts (tool, envelope, hash, run_id, call_id) VALUES ($1, '{}', '', $2, $3) RETURNING id`,
		call.Tool, call.RunID, call.CallID).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("ledger: record attempt of %s: %w", call.Tool, err)
	}
	return id, nil
}

// finishAttempt records how a dispatched attempt ended, also over an unknown that a rerun
// wrote while the outcome was still on its way. It reports false when the attempt had ended
// already: an earlier write of this outcome was committed although its answer was lost.
func finishAttempt(ctx context.Context, tx pgx.Tx, id int64, state action.State, errText string) (bool, error) {
	tag, err := tx.Exec(ctx, `
		UPDATE core.effect_attempts SET state = $2, error = $3, finished_at = now()
		WHERE id = $1 AND state IN ('dispatched', 'unknown')`, id, string(state), redact.Storable(errText))
	if err != nil {
		return false, fmt.Errorf("ledger: finish attempt %d: %w", id, err)
	}
	if tag.RowsAffected() > 0 {
		return true, nil
	}
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM core.effect_attempts WHERE id = $1)`, id).Scan(&exists); err != nil {
		return false, fmt.Errorf("ledger: finish attempt %d: %w", id, err)
	}
	if !exists {
		return false, fmt.Errorf("ledger: attempt %d is missing: the database lost a committed write", id)
	}
	return false, nil
}

// markDispatchedUnknown turns the dispatched attempts of an action into unknown ones and
// reports whether there were any.
func markDispatchedUnknown(ctx context.Context, tx pgx.Tx, actionID string) (bool, error) {
	tag, err := tx.Exec(ctx, `
		UPDATE core.effect_attempts SET state = 'unknown', finished_at = now(),
		       error = 'no outcome was recorded after dispatch'
		WHERE action_id = $1 AND state = 'dispatched'`, actionID)
	if err != nil {
		return false, fmt.Errorf("ledger: mark unknown for %s: %w", actionID, err)
	}
	return tag.RowsAffected() > 0, nil
}

// Attempt is one row of the effect ledger.
type Attempt struct {
	ID     int64  `json:"id"`              // increasing in the order attempts were recorded
	State  string `json:"state"`           // dispatched, succeeded, failed or unknown
	Error  string `json:"error,omitempty"` // why it failed or is unknown; empty otherwise
	Hash   string `json:"hash"`            // the hash of the action it dispatched
	Action string `json:"action_id"`       // the action's id
}

// Attempts lists an action's ledger rows in order.
func Attempts(ctx context.Context, pool *pgxpool.Pool, actionID string) ([]Attempt, error) {
	rows, err := pool.Query(ctx, `SELECT id, state, error, hash, action_id::text FROM core.effect_attempts WHERE action_id = $1 ORDER BY id`, actionID)
	if err != nil {
		return nil, fmt.Errorf("ledger: list attempts of %s: %w", actionID, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Attempt, error) {
		var a Attempt
		err := r.Scan(&a.ID, &a.State, &a.Error, &a.Hash, &a.Action)
		return a, err
	})
}
