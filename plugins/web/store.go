package web

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/internal/readable"
)

// Owner is the agent name web.fetches records for the owner's own reads (buddi web read).
const Owner = "owner"

// Record is one row of web.fetches.
type Record struct {
	Agent          string    `json:"agent"`           // the agent whose call it was, or [Owner]
	At             time.Time `json:"at"`              // when the fetch began
	Tool           string    `json:"tool"`            // "web.read" or "web.search"
	Purpose        string    `json:"purpose"`         // why, in the caller's words
	ConversationID string    `json:"conversation_id"` // the call's conversation, if any
	RunID          string    `json:"run_id"`          // the call's run, if any
	Fetch                    // what happened; no body (its fields are the row's)
}

// Store writes and reads web.fetches.
type Store struct {
	Pool *pgxpool.Pool // the database holding the web schema
}

// Add writes one row.
func (s Store) Add(ctx context.Context, r Record) error {
	var status *int
	if r.Status > 0 {
		status = &r.Status
	}
	_, err := s.Pool.Exec(ctx, `INSERT INTO web.fetches
		(agent, at, tool, purpose, host, outcome, reason, status, bytes, conversation_id, run_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		r.Agent, r.At, r.Tool, readable.Bound(r.Purpose, maxPurpose), readable.Bound(r.Host, 255), r.Outcome,
		readable.Bound(r.Reason, 1000), status, r.Bytes, r.ConversationID, r.RunID)
	if err != nil {
		return fmt.Errorf("web: record the fetch in web.fetches: %w", err)
	}
	return nil
}

// Recent returns the last n rows for agent (every agent when agent is ""), newest first.
func (s Store) Recent(ctx context.Context, agent string, n int) ([]Record, error) {
	rows, err := s.Pool.Query(ctx, `SELECT agent, at, tool, purpose, host, outcome, reason,
			coalesce(status, 0), bytes, conversation_id, run_id
		FROM web.fetches WHERE $1 = '' OR agent = $1 ORDER BY at DESC, id DESC LIMIT $2`, agent, n)
	if err != nil {
		return nil, fmt.Errorf("web: read web.fetches: %w", err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var r Record
		if err := rows.Scan(&r.Agent, &r.At, &r.Tool, &r.Purpose, &r.Host, &r.Outcome, &r.Reason,
			&r.Status, &r.Bytes, &r.ConversationID, &r.RunID); err != nil {
			return nil, fmt.Errorf("web: read web.fetches: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
