package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/seal"
	"buddi/plugins"
)

// Standing is a standing permission: the owner's approval, given once, for every call of one
// tool version by one agent, in one conversation or in all of them.
type Standing struct {
	ID             int64      `json:"id"`                        // as in "standing:<id>"
	Agent          string     `json:"agent"`                     // the agent whose calls it covers
	Tool           string     `json:"tool"`                      // the tool's name
	ToolVersion    string     `json:"tool_version"`              // this plugin version only
	ConversationID string     `json:"conversation_id,omitempty"` // empty: every conversation
	GrantedBy      string     `json:"granted_by"`                // the owner surface that granted it
	GrantedAt      time.Time  `json:"granted_at"`                // when it was granted
	RevokedBy      string     `json:"revoked_by,omitempty"`      // who revoked it; empty while live
	RevokedAt      *time.Time `json:"revoked_at,omitempty"`      // when it was revoked; nil while live
}

// ErrNotReusable means the tool did not opt into reusable approval.
var ErrNotReusable = errors.New("action: the tool does not allow a standing permission")

// standingSeal seals a standing permission: its id, agent, tool, version, conversation, who
// granted it and when.
func standingSeal(key seal.Key, s Standing) string {
	return key.Seal("standing", fmt.Sprint(s.ID), s.Agent, s.Tool, s.ToolVersion, s.ConversationID, s.GrantedBy, stamp(s.GrantedAt))
}

// Grant records a standing permission from an owner surface, for a tool whose spec opts in,
// sealed with key.
func Grant(ctx context.Context, tx pgx.Tx, key seal.Key, spec plugins.Spec, version, agent, conversationID, surface string) (Standing, error) {
	if key.IsZero() {
		return Standing{}, fmt.Errorf("grant %s to %s: %w", spec.Name, agent, seal.ErrNoKey)
	}
	if !spec.ReusableApproval {
		return Standing{}, fmt.Errorf("grant %s to %s: %w", spec.Name, agent, ErrNotReusable)
	}
	if !slices.Contains(OwnerSurfaces, surface) {
		return Standing{}, fmt.Errorf("grant %s: %q is not an owner surface", spec.Name, surface)
	}
	var s Standing
	err := tx.QueryRow(ctx, `
		INSERT INTO core.tool_permissions (agent, tool, tool_version, conversation_id, granted_by)
		VALUES ($1, $2, $3, NULLIF($4, '')::uuid, $5)
		RETURNING id, granted_at`, agent, spec.Name, version, conversationID, surface).Scan(&s.ID, &s.GrantedAt)
	if err != nil {
		return Standing{}, fmt.Errorf("grant %s to %s: %w", spec.Name, agent, err)
	}
	s.Agent, s.Tool, s.ToolVersion, s.ConversationID, s.GrantedBy = agent, spec.Name, version, conversationID, surface
	if _, err := tx.Exec(ctx, `UPDATE core.tool_permissions SET seal = $2 WHERE id = $1`, s.ID, standingSeal(key, s)); err != nil {
		return Standing{}, fmt.Errorf("grant %s to %s: %w", spec.Name, agent, err)
	}
	_, err = eventlog.Append(ctx, tx, events.PermissionGranted, conversationID, events.PermissionGrantedPayload{
		ID: s.ID, Agent: s.Agent, Tool: s.Tool, ToolVersion: s.ToolVersion, ConversationID: s.ConversationID,
		GrantedBy: s.GrantedBy, GrantedAt: s.GrantedAt,
	})
	return s, err
}

// Revoke ends a standing permission; only an owner surface may.
func Revoke(ctx context.Context, tx pgx.Tx, id int64, surface string) error {
	if !slices.Contains(OwnerSurfaces, surface) {
		return fmt.Errorf("revoke standing permission %d: %q is not an owner surface", id, surface)
	}
	tag, err := tx.Exec(ctx, `UPDATE core.tool_permissions SET revoked_by = $2, revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, id, surface)
	if err != nil {
		return fmt.Errorf("revoke standing permission %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("standing permission %d: %w", id, ErrNotFound)
	}
	_, err = eventlog.Append(ctx, tx, events.PermissionRevoked, "", events.PermissionRevokedPayload{ID: id, Surface: surface})
	return err
}

// Covering finds a live standing permission for call at version: same agent, tool and
// version, and the call's conversation or all, whose seal checks under key (a row someone
// wrote into the table is no permission). A delegate's call is never covered: standing
// permissions are not inherited. Nor is a remote caller's (buddi mcp): what another program
// asks for is decided by the owner on their own surfaces, card by card.
func Covering(ctx context.Context, q eventlog.Querier, key seal.Key, call plugins.Call, version string) (int64, bool, error) {
	if call.DelegationDepth > 0 || call.Remote || call.Agent == "" || key.IsZero() {
		return 0, false, nil
	}
	rows, err := q.Query(ctx, `
		SELECT id, agent, tool, tool_version, COALESCE(conversation_id::text, ''), granted_by, granted_at, seal
		FROM core.tool_permissions
		WHERE agent = $1 AND tool = $2 AND tool_version = $3 AND revoked_at IS NULL
		  AND (conversation_id IS NULL OR conversation_id = NULLIF($4, '')::uuid)
		ORDER BY id`, call.Agent, call.Tool, version, call.ConversationID)
	if err != nil {
		return 0, false, fmt.Errorf("look up standing permission for %s: %w", call.Tool, err)
	}
	type row struct {
		s   Standing
		sum string
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		err := r.Scan(&x.s.ID, &x.s.Agent, &x.s.Tool, &x.s.ToolVersion, &x.s.ConversationID, &x.s.GrantedBy, &x.s.GrantedAt, &x.sum)
		return x, err
	})
	if err != nil {
		return 0, false, fmt.Errorf("look up standing permission for %s: %w", call.Tool, err)
	}
	for _, x := range found {
		if key.Check(x.sum, "standing", fmt.Sprint(x.s.ID), x.s.Agent, x.s.Tool, x.s.ToolVersion, x.s.ConversationID, x.s.GrantedBy, stamp(x.s.GrantedAt)) {
			return x.s.ID, true, nil
		}
	}
	return 0, false, nil
}

// ListStanding returns the standing permissions, live ones first.
func ListStanding(ctx context.Context, q eventlog.Querier) ([]Standing, error) {
	rows, err := q.Query(ctx, `
		SELECT id, agent, tool, tool_version, COALESCE(conversation_id::text, ''), granted_by, granted_at,
		       COALESCE(revoked_by, ''), revoked_at
		FROM core.tool_permissions ORDER BY revoked_at IS NOT NULL, id`)
	if err != nil {
		return nil, fmt.Errorf("list standing permissions: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Standing, error) {
		var s Standing
		err := r.Scan(&s.ID, &s.Agent, &s.Tool, &s.ToolVersion, &s.ConversationID, &s.GrantedBy, &s.GrantedAt, &s.RevokedBy, &s.RevokedAt)
		return s, err
	})
}

// StandingPrefix marks an approval decided by a standing permission: "standing:<id>".
const StandingPrefix = "standing:"

// ApproveByStanding approves a pending action under standing permission id, in tx, sealing
// the decision with key. Its declared choices take their defaults; a choice without one needs
// the owner, so the action stays pending and ErrBadPick says why.
func ApproveByStanding(ctx context.Context, tx pgx.Tx, key seal.Key, actionID string, id int64) (Record, error) {
	by := fmt.Sprintf("%s%d", StandingPrefix, id)
	pending, err := Get(ctx, tx, actionID)
	if err != nil {
		return Record{}, err
	}
	if why := pending.CheckAction(key); why != "" {
		return Record{}, &ForgedError{ActionID: actionID, Why: why}
	}
	picks, err := validatePicks(pending, nil)
	if err != nil {
		return Record{}, err
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	sum, err := decisionSeal(key, pending, Approved, by, picks, at)
	if err != nil {
		return Record{}, err
	}
	tag, err := tx.Exec(ctx, `
		UPDATE core.approvals SET state = 'approved', decided_by = $2, decided_at = $4, picks = $3,
		       decision_seal = $5, updated_at = now()
		WHERE action_id = $1 AND state = 'pending'`, actionID, by, picks, at, sum)
	if err != nil {
		return Record{}, fmt.Errorf("approve action %s by %s: %w", actionID, by, err)
	}
	if tag.RowsAffected() == 0 {
		return Record{}, lost(ctx, tx, actionID)
	}
	rec, err := Get(ctx, tx, actionID)
	if err != nil {
		return Record{}, err
	}
	_, err = eventlog.Append(ctx, tx, events.ApprovalApproved, rec.ConversationID, events.ApprovalDecidedPayload{
		ActionID: actionID, Tool: rec.Tool, Surface: by, Reason: "covered by a standing permission",
	})
	return rec, err
}
