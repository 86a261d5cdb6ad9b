package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Recovery is the state of a restored installation (seed 004: "a restored installation
// starts in recovery mode"). It is kept inside the pause flag (core.system_flags "paused",
// the one `buddi pause` writes) so that recovery is a pause, with everything a pause stops
// stopped, and `buddi resume`, which removes that flag, leaves recovery as well.
type Recovery struct {
	// Since is when the restore finished, UTC.
	Since time.Time `json:"since"`
	// Archive is the file name of the archive restored.
	Archive string `json:"archive"`
	// TakenAt is when the backup restored was taken.
	TakenAt time.Time `json:"taken_at"`
	// BuddiVersion is the version of the buddi that took it.
	BuddiVersion string `json:"buddi_version"`
	// SealKept reports whether the home already held a seal.key when it was restored (the
	// owner's original, copied over: the sealed rows still check).
	SealKept bool `json:"seal_kept"`
}

// execer is a pool, a connection or a transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// EnterRecovery pauses all work and marks the pause as recovery: the queues the database
// knows are paused now, and any other by buddi serve at its start (queue.HoldIfPaused).
func EnterRecovery(ctx context.Context, db execer, r Recovery) error {
	rec, err := json.Marshal(r)
	if err != nil {
		return err
	}
	value, _ := json.Marshal(map[string]any{"since": r.Since, "recovery": json.RawMessage(rec)})
	if _, err := db.Exec(ctx, `INSERT INTO core.system_flags (key, value) VALUES ('paused', $1)
		ON CONFLICT (key) DO UPDATE SET value = core.system_flags.value || jsonb_build_object('recovery', EXCLUDED.value->'recovery'), updated_at = now()`, value); err != nil {
		return fmt.Errorf("enter recovery mode: %w", err)
	}
	// The queues that existed start paused, before buddi serve first fetches a job.
	if _, err := db.Exec(ctx, `UPDATE river.river_queue SET paused_at = now(), updated_at = now() WHERE paused_at IS NULL`); err != nil {
		return fmt.Errorf("pause the restored queues: %w", err)
	}
	return nil
}

// InRecovery returns the recovery state, or nil when buddi is not in recovery mode.
func InRecovery(ctx context.Context, db execer) (*Recovery, error) {
	var raw []byte
	err := db.QueryRow(ctx, `SELECT value->'recovery' FROM core.system_flags WHERE key = 'paused'`).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && (len(raw) == 0 || string(raw) == "null")) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read whether buddi is in recovery mode: %w", err)
	}
	var r Recovery
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("read the recovery state: %w", err)
	}
	return &r, nil
}

// Item is one action on the recovery checklist.
type Item struct {
	ActionID       string    `json:"action_id"`                 // the action's id (buddi approvals show ID)
	Tool           string    `json:"tool"`                      // the tool it calls
	Agent          string    `json:"agent"`                     // the agent that proposed it
	State          string    `json:"state"`                     // approved, executing or unknown
	Reason         string    `json:"reason,omitempty"`          // the latest reason recorded
	UpdatedAt      time.Time `json:"updated_at"`                // when its approval last changed
	Effect         string    `json:"effect,omitempty"`          // the effect ledger's state of its attempt, if any
	Summary        string    `json:"summary,omitempty"`         // the envelope's summary, when it has one
	Decided        string    `json:"decided,omitempty"`         // who decided it
	ConversationID string    `json:"conversation_id,omitempty"` // its conversation's id
}

// Checklist is what the owner goes through before leaving recovery mode.
type Checklist struct {
	// Recovery is the restore's state; nil when buddi is not in recovery mode.
	Recovery *Recovery `json:"recovery"`
	// Approved are actions the owner approved that never began: leaving recovery lets
	// them run (reject one with `buddi approvals reject ID` first if it should not).
	Approved []Item `json:"approved"`
	// Unknown are effects whose outcome nobody knows (the backup was taken while they ran,
	// or they ended ambiguously): check each by hand; buddi never retries them.
	Unknown []Item `json:"unknown"`
	// Pending counts actions still waiting for a decision.
	Pending int `json:"pending"`
	// Jobs counts the queue's jobs that would run on resume, by state (available,
	// scheduled, retryable, running).
	Jobs map[string]int64 `json:"jobs"`
}

// ReadChecklist reads the recovery checklist (also outside recovery mode, where Recovery is nil).
func ReadChecklist(ctx context.Context, db interface {
	execer
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}) (*Checklist, error) {
	r, err := InRecovery(ctx, db)
	if err != nil {
		return nil, err
	}
	c := &Checklist{Recovery: r, Approved: []Item{}, Unknown: []Item{}, Jobs: map[string]int64{}}
	rows, err := db.Query(ctx, `SELECT a.id::text, a.tool, a.agent, p.state, p.reason, p.updated_at,
			COALESCE(e.state, ''), COALESCE(a.envelope->>'summary', ''), COALESCE(p.decided_by, ''), COALESCE(a.conversation_id::text, '')
		FROM core.approvals p JOIN core.actions a ON a.id = p.action_id
		LEFT JOIN core.effect_attempts e ON e.action_id = a.id
		WHERE p.state IN ('approved', 'executing', 'unknown') OR e.state IN ('dispatched', 'unknown')
		ORDER BY p.updated_at, a.id`)
	if err != nil {
		return nil, fmt.Errorf("list the actions to review: %w", err)
	}
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Item, error) {
		var it Item
		err := row.Scan(&it.ActionID, &it.Tool, &it.Agent, &it.State, &it.Reason, &it.UpdatedAt, &it.Effect, &it.Summary, &it.Decided, &it.ConversationID)
		return it, err
	})
	if err != nil {
		return nil, fmt.Errorf("list the actions to review: %w", err)
	}
	for _, it := range items {
		if it.State == "approved" && it.Effect == "" {
			c.Approved = append(c.Approved, it)
		} else {
			c.Unknown = append(c.Unknown, it)
		}
	}
	if err := db.QueryRow(ctx, `SELECT count(*) FROM core.approvals WHERE state = 'pending'`).Scan(&c.Pending); err != nil {
		return nil, fmt.Errorf("count the actions waiting for a decision: %w", err)
	}
	jobs, err := db.Query(ctx, `SELECT state::text, count(*) FROM river.river_job
		WHERE state IN ('available', 'scheduled', 'retryable', 'running') GROUP BY 1`)
	if err != nil {
		return nil, fmt.Errorf("count the queue's jobs: %w", err)
	}
	type kv struct {
		k string
		n int64
	}
	counts, err := pgx.CollectRows(jobs, func(row pgx.CollectableRow) (kv, error) {
		var x kv
		return x, row.Scan(&x.k, &x.n)
	})
	if err != nil {
		return nil, fmt.Errorf("count the queue's jobs: %w", err)
	}
	for _, x := range counts {
		c.Jobs[x.k] = x.n
	}
	return c, nil
}
