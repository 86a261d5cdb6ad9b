package action

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/canonical"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/redact"
	"buddi/core/seal"
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
// gives ErrExpired. The decision is sealed with key (the action, the state, the surface, the
// picks and the time) and recorded as an event with its reason. An action whose own seal does
// not check was not proposed by buddi: it is refused, recorded, and ErrForged returned.
func Decide(ctx context.Context, tx pgx.Tx, key seal.Key, d Decision) (Record, error) {
	if !slices.Contains(OwnerSurfaces, d.Surface) {
		return Record{}, fmt.Errorf("decide action %s: %q is not an owner surface", d.ActionID, d.Surface)
	}
	if key.IsZero() {
		return Record{}, fmt.Errorf("decide action %s: %w", d.ActionID, seal.ErrNoKey)
	}
	d.Reason = redact.Storable(d.Reason)
	rec, err := Get(ctx, tx, d.ActionID)
	if err != nil {
		return Record{}, err
	}
	if rec.Approval.State == Pending {
		if why := rec.CheckAction(key); why != "" {
			return Record{}, &ForgedError{ActionID: rec.ID, Why: why}
		}
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
	at := time.Now().UTC().Truncate(time.Microsecond)
	sum, err := decisionSeal(key, rec, state, d.Surface, picks, at)
	if err != nil {
		return Record{}, err
	}
	tag, err := tx.Exec(ctx, `
		UPDATE core.approvals p SET state = $2, decided_by = $3, decided_at = $6, picks = $4,
		       reason = $5, decision_seal = $7, updated_at = now()
		FROM core.actions a
		WHERE p.action_id = $1 AND a.id = p.action_id AND p.state = 'pending' AND a.expires_at > now()`,
		d.ActionID, state, d.Surface, picks, d.Reason, at, sum)
	if err != nil {
		return Record{}, fmt.Errorf("decide action %s: %w", d.ActionID, err)
	}
	if tag.RowsAffected() == 0 {
		return Record{}, lost(ctx, tx, d.ActionID)
	}
	kind := events.ApprovalRejected
	if d.Approve {
		kind = events.ApprovalApproved
	}
	if _, err := eventlog.Append(ctx, tx, kind, rec.ConversationID, events.ApprovalDecidedPayload{
		ActionID: d.ActionID, Tool: rec.Tool, Surface: d.Surface, Picks: picks, Reason: d.Reason,
	}); err != nil {
		return Record{}, err
	}
	return Get(ctx, tx, d.ActionID)
}

// ApprovalWindow is how long an approval stays good: an approved action that has not begun
// executing within it expires instead (an approval given while buddi was down, or a job that
// waited, is not a standing order to act whenever buddi next runs).
const ApprovalWindow = 15 * time.Minute

// approvalLapsed is the reason an approval that was not acted on in time expired.
const approvalLapsed = "approved, but not begun within 15 minutes of the approval (buddi was not running, or the work waited): approve it again if it is still wanted"

// ErrForged means an action or its decision is not what buddi wrote: its seal does not
// check under the installation's key.
var ErrForged = errors.New("action: its seal does not check: it was not written by buddi")

// decisionSeal seals a decision: the action (by id and its own seal), the state decided, who
// decided, the picks and when.
func decisionSeal(key seal.Key, rec Record, state State, by string, picks map[string]string, at time.Time) (string, error) {
	if picks == nil {
		picks = map[string]string{}
	}
	p, err := canonical.Marshal(picks)
	if err != nil {
		return "", fmt.Errorf("seal decision on %s: %w", rec.ID, err)
	}
	return key.Seal("decision", rec.ID, rec.Hash, string(state), by, string(p), stamp(at)), nil
}

// CheckAction says why r's action row is not buddi's own ("" when its seal checks): made
// under an older policy, or its seal does not match its contents.
func (r Record) CheckAction(key seal.Key) string {
	if r.PolicyVersion != PolicyVersion {
		return fmt.Sprintf("it was made under policy version %d, before actions were sealed: ask for it again", r.PolicyVersion)
	}
	sum, err := Hash(key, r.Action)
	if err != nil || subtle.ConstantTimeCompare([]byte(sum), []byte(r.Hash)) != 1 {
		return "its seal does not match what it says: it was not written by buddi"
	}
	return ""
}

// CheckDecision says why r's approval is not a decision buddi sealed ("" when it checks):
// the action's seal, then the decision's (approved, by whom, with which picks, when).
func (r Record) CheckDecision(key seal.Key) string {
	if why := r.CheckAction(key); why != "" {
		return why
	}
	if r.Approval.DecidedAt == nil || r.Approval.Seal == "" {
		return "its approval carries no seal: it was not decided through buddi"
	}
	want, err := decisionSeal(key, r, Approved, r.Approval.DecidedBy, r.Approval.Picks, *r.Approval.DecidedAt)
	if err != nil || subtle.ConstantTimeCompare([]byte(want), []byte(r.Approval.Seal)) != 1 {
		return "its approval's seal does not match who decided, how or when: it was not decided through buddi"
	}
	return ""
}

// ForgedError is a decision refused because the action is not buddi's own; the caller
// records the refusal (RefuseForged) in a transaction of its own.
type ForgedError struct {
	ActionID string // the action
	Why      string // why its seal does not check, as a sentence
}

// Error says what happened in one sentence.
func (e *ForgedError) Error() string {
	return fmt.Sprintf("action %s is refused: %s", e.ActionID, e.Why)
}

// Unwrap makes a ForgedError match ErrForged.
func (e *ForgedError) Unwrap() error { return ErrForged }

// RefuseForged refuses an action that is not buddi's own (pending or approved), with an
// action.forged event giving why, and returns it as it now stands; false when it was in
// another state already.
func RefuseForged(ctx context.Context, tx pgx.Tx, id, why string) (Record, bool, error) {
	rec, err := Get(ctx, tx, id)
	if err != nil {
		return Record{}, false, err
	}
	switch rec.Approval.State {
	case Pending, Approved, Executing:
	default:
		return rec, false, nil
	}
	moved, err := Transition(ctx, tx, rec.ID, rec.Approval.State, Refused, why, nil)
	if err != nil || !moved {
		return rec, false, err
	}
	if _, err := eventlog.Append(ctx, tx, events.ActionForged, rec.ConversationID, events.ActionForgedPayload{
		ActionID: rec.ID, Tool: rec.Tool, Agent: rec.Agent, Reason: why,
	}); err != nil {
		return Record{}, false, err
	}
	rec, err = Get(ctx, tx, id)
	return rec, true, err
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

// ExpireDue marks every pending action past its expiry, and every approved one that has not
// begun executing within the ApprovalWindow, as expired, each with an event, and returns
// their ids.
func ExpireDue(ctx context.Context, tx pgx.Tx) ([]string, error) {
	rows, err := tx.Query(ctx, `
		UPDATE core.approvals p SET state = 'expired', updated_at = now(),
		       reason = CASE p.state WHEN 'pending' THEN 'no decision before the expiry' ELSE $1 END
		FROM core.actions a
		WHERE a.id = p.action_id AND ((p.state = 'pending' AND a.expires_at <= now())
		   OR (p.state = 'approved' AND p.decided_at + $2::interval <= now()))
		RETURNING p.action_id::text, COALESCE(a.conversation_id::text, ''), p.reason`, approvalLapsed, ApprovalWindow.String())
	if err != nil {
		return nil, fmt.Errorf("expire actions: %w", err)
	}
	type due struct{ id, conv, reason string }
	expired, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (due, error) {
		var d due
		err := r.Scan(&d.id, &d.conv, &d.reason)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("expire actions: %w", err)
	}
	ids := make([]string, 0, len(expired))
	for _, d := range expired {
		if _, err := eventlog.Append(ctx, tx, events.ApprovalExpired, d.conv, events.ApprovalExpiredPayload{ActionID: d.id, Reason: d.reason}); err != nil {
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
// reason (action.<to>); it reports false when the approval was not in from. The states an
// approval is moved to are approved, executing, succeeded, failed, expired, refused and
// unknown; the others are set by Create, Decide and ExpireDue.
func Transition(ctx context.Context, tx pgx.Tx, id string, from, to State, reason string, result []byte) (bool, error) {
	var kind events.Kind
	switch to {
	case Approved:
		kind = events.ActionApproved
	case Executing:
		kind = events.ActionExecuting
	case Succeeded:
		kind = events.ActionSucceeded
	case Failed:
		kind = events.ActionFailed
	case Expired:
		kind = events.ActionExpired
	case Refused:
		kind = events.ActionRefused
	case Unknown: // action.unknown, with its own payload below
	default:
		return false, fmt.Errorf("action %s: %s → %s is not a transition: an approval is moved to %s only by deciding or expiring it", id, from, to, to)
	}
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
	if to == Unknown {
		_, err = eventlog.Append(ctx, tx, events.ActionUnknown, conv, events.ActionUnknownPayload{ActionID: id, From: string(from), Reason: reason})
	} else {
		_, err = eventlog.Append(ctx, tx, kind, conv, events.ActionMovedPayload{ActionID: id, From: string(from), Reason: reason})
	}
	return err == nil, err
}

func nullableJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
