package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/eventlog"
)

// Surfaces the owner decides from. Only these may decide approvals or revoke standing
// permissions.
var OwnerSurfaces = []string{"terminal", "dashboard", "telegram"}

// Decision is the owner's answer on one action.
type Decision struct {
	// ActionID is the id of the action decided.
	ActionID string
	// Approve is true to approve the action, false to reject it.
	Approve bool
	// Surface is where the owner decided: one of OwnerSurfaces.
	Surface string
	// Picks are the owner's answers to the action's declared choices, by choice name.
	Picks map[string]string
	// Reason is the owner's note, if any.
	Reason string
	// Remember, on an approval, also grants a standing permission for the tool: RememberConversation
	// for this conversation, RememberAll for all of the agent's. Only for tools that opt in.
	Remember Remember
}

// Remember is the scope of a standing permission granted with an approval.
type Remember string

// The scopes.
const (
	RememberNone         Remember = ""
	RememberConversation Remember = "conversation"
	RememberAll          Remember = "all"
)

// AlreadyDecidedError tells the loser of a race (or a late decision) how the action went.
type AlreadyDecidedError struct {
	ActionID string     // the action's id
	State    State      // its state now
	By       string     // who decided: an owner surface or "standing:<id>"; empty if it expired
	At       *time.Time // when it was decided; nil if it expired
}

// Error says what happened in one sentence.
func (e *AlreadyDecidedError) Error() string {
	by := ""
	if e.By != "" {
		by = " on " + e.By
	}
	return fmt.Sprintf("action %s was already decided%s: it is %s", e.ActionID, by, e.State)
}

// ErrExpired means the action waited past its expiry; it is now expired.
var ErrExpired = errors.New("action: expired")

// ErrBadRemember means a standing permission was asked for with a scope that does not fit.
var ErrBadRemember = errors.New("action: remember needs \"conversation\" (for an action in one) or \"all\"")

// ErrBadPick means a pick names no declared choice or an option it does not offer.
var ErrBadPick = errors.New("action: pick not among the declared choices")

// Decide is the one atomic claim on a pending action, in tx: exactly one decision wins. A
// loser gets *AlreadyDecidedError with the outcome; an expired action becomes expired and
// gives ErrExpired. The decision is recorded as an event with its reason.
func Decide(ctx context.Context, tx pgx.Tx, d Decision) (Record, error) {
	if !slices.Contains(OwnerSurfaces, d.Surface) {
		return Record{}, fmt.Errorf("decide action %s: %q is not an owner surface", d.ActionID, d.Surface)
	}
	rec, err := Get(ctx, tx, d.ActionID)
	if err != nil {
		return Record{}, err
	}
	picks := map[string]string{}
	if d.Approve {
		if picks, err = validatePicks(rec, d.Picks); err != nil {
			return Record{}, err
		}
	}
	state := Rejected
	if d.Approve {
		state = Approved
	}
	tag, err := tx.Exec(ctx, `
		UPDATE core.approvals p SET state = $2, decided_by = $3, decided_at = now(), picks = $4,
		       reason = $5, updated_at = now()
		FROM core.actions a
		WHERE p.action_id = $1 AND a.id = p.action_id AND p.state = 'pending' AND a.expires_at > now()`,
		d.ActionID, state, d.Surface, picks, d.Reason)
	if err != nil {
		return Record{}, fmt.Errorf("decide action %s: %w", d.ActionID, err)
	}
	if tag.RowsAffected() == 0 {
		return Record{}, lost(ctx, tx, d.ActionID)
	}
	kind := "approval.rejected"
	if d.Approve {
		kind = "approval.approved"
	}
	if _, err := eventlog.Append(ctx, tx, kind, rec.ConversationID, map[string]any{
		"action_id": d.ActionID, "tool": rec.Tool, "surface": d.Surface, "picks": picks, "reason": d.Reason,
	}); err != nil {
		return Record{}, err
	}
	return Get(ctx, tx, d.ActionID)
}

// lost explains a claim that changed nothing: decided already (the row lock of the winner's
// UPDATE made this one wait and then see the new state), or expired.
func lost(ctx context.Context, tx pgx.Tx, id string) error {
	rec, err := Get(ctx, tx, id)
	if err != nil {
		return err
	}
	if rec.Approval.State == Pending { // pending but past its expiry: ExpireDue records it
		return fmt.Errorf("action %s waited past %s: %w", id, rec.ExpiresAt.Format(time.RFC3339), ErrExpired)
	}
	return &AlreadyDecidedError{ActionID: id, State: rec.Approval.State, By: rec.Approval.DecidedBy, At: rec.Approval.DecidedAt}
}

// ExpireDue marks every pending action past its expiry as expired, each with an event, and
// returns their ids.
func ExpireDue(ctx context.Context, tx pgx.Tx) ([]string, error) {
	rows, err := tx.Query(ctx, `
		UPDATE core.approvals p SET state = 'expired', updated_at = now(), reason = 'no decision before the expiry'
		FROM core.actions a
		WHERE a.id = p.action_id AND p.state = 'pending' AND a.expires_at <= now()
		RETURNING p.action_id::text, COALESCE(a.conversation_id::text, '')`)
	if err != nil {
		return nil, fmt.Errorf("expire actions: %w", err)
	}
	type due struct{ id, conv string }
	expired, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (due, error) {
		var d due
		err := r.Scan(&d.id, &d.conv)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("expire actions: %w", err)
	}
	ids := make([]string, 0, len(expired))
	for _, d := range expired {
		if _, err := eventlog.Append(ctx, tx, "approval.expired", d.conv, map[string]any{"action_id": d.id, "reason": "no decision before the expiry"}); err != nil {
			return nil, err
		}
		ids = append(ids, d.id)
	}
	return ids, nil
}

// validatePicks checks the owner's picks against the declared choices; a choice left out
// takes its default, and one with no default must be picked.
func validatePicks(rec Record, picks map[string]string) (map[string]string, error) {
	out := map[string]string{}
	declared := map[string]bool{}
	for _, c := range rec.Envelope.Choices {
		declared[c.Name] = true
		v, ok := picks[c.Name]
		if !ok {
			if c.Default == "" {
				return nil, fmt.Errorf("action %s: choose %s (one of %v): %w", rec.ID, c.Name, c.Options, ErrBadPick)
			}
			v = c.Default
		}
		if !slices.Contains(c.Options, v) {
			return nil, fmt.Errorf("action %s: %q is not an option for %s (one of %v): %w", rec.ID, v, c.Name, c.Options, ErrBadPick)
		}
		out[c.Name] = v
	}
	for name := range picks {
		if !declared[name] {
			return nil, fmt.Errorf("action %s declares no choice %q: %w", rec.ID, name, ErrBadPick)
		}
	}
	return out, nil
}

// Transition moves an approval from one state to another in q, recording an event with the
// reason; it reports false when the approval was not in from.
func Transition(ctx context.Context, tx pgx.Tx, id string, from, to State, reason string, result []byte) (bool, error) {
	tag, err := tx.Exec(ctx, `
		UPDATE core.approvals SET state = $3, reason = CASE WHEN $4 = '' THEN reason ELSE $4 END,
		       result = COALESCE($5::jsonb, result), updated_at = now()
		WHERE action_id = $1 AND state = $2`, id, from, to, reason, nullableJSON(result))
	if err != nil {
		return false, fmt.Errorf("action %s: %s → %s: %w", id, from, to, err)
	}
	if tag.RowsAffected() == 0 {
		return false, nil
	}
	var conv string
	if err := tx.QueryRow(ctx, `SELECT COALESCE(conversation_id::text, '') FROM core.actions WHERE id = $1`, id).Scan(&conv); err != nil {
		return false, fmt.Errorf("action %s: %w", id, err)
	}
	_, err = eventlog.Append(ctx, tx, "action."+string(to), conv, map[string]any{"action_id": id, "from": from, "reason": reason})
	return err == nil, err
}

func nullableJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
