// Package eventlog is core's append-only record of committed facts (core.events). An append
// joins the caller's transaction, so a fact and the change it reports commit together; the
// database itself refuses UPDATE, DELETE and TRUNCATE on the table.
package eventlog

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/events"
	"buddi/core/redact"
)

// Querier is what Append and List need: a pgx.Tx, *pgx.Conn or *pgxpool.Pool.
type Querier interface {
	// QueryRow runs sql with args and returns its first row.
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	// Query runs sql with args and returns its rows.
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Event is one row of core.events.
type Event struct {
	ID             int64           `json:"id"`                        // increasing in append order
	Kind           events.Kind     `json:"kind"`                      // one of core/events' kinds
	ConversationID string          `json:"conversation_id,omitempty"` // a UUID, or empty
	Payload        json.RawMessage `json:"payload"`                   // a JSON object; {} for none
	CreatedAt      time.Time       `json:"created_at"`                // the appending transaction's now()
}

// Append records one fact in q's transaction. kind is a constant of core/events and payload
// its payload struct (events.Payloads), marshalled to a JSON object; nil gives {}.
// conversationID is a UUID or empty.
func Append(ctx context.Context, q Querier, kind events.Kind, conversationID string, payload any) (Event, error) {
	raw := []byte("{}")
	if payload != nil {
		var err error
		if raw, err = json.Marshal(payload); err != nil {
			return Event{}, fmt.Errorf("append event %s: marshal payload: %w", kind, err)
		}
		raw = redact.StorableJSON(raw) // jsonb refuses \u0000: a NUL is kept as U+FFFD
	}
	ev := Event{Kind: kind, ConversationID: conversationID}
	var conv *string
	err := q.QueryRow(ctx, `
		INSERT INTO core.events (kind, conversation_id, payload)
		VALUES ($1, NULLIF($2, '')::uuid, $3::jsonb)
		RETURNING id, conversation_id::text, payload, created_at`,
		kind, conversationID, string(raw)).Scan(&ev.ID, &conv, &ev.Payload, &ev.CreatedAt)
	if err != nil {
		return Event{}, fmt.Errorf("append event %s: %w", kind, err)
	}
	if conv != nil {
		ev.ConversationID = *conv
	}
	return ev, nil
}

// Filter selects events for List. The zero value lists the first 100 events.
type Filter struct {
	AfterID int64  // only events with a larger id
	Kind    string // exact kind, or a family's prefix ending in "." (events.SupervisorRestarted.Family())
	Limit   int    // default 100, at most 1000
	Newest  bool   // the latest events, newest first, instead of append order
}

// List returns events in append order, or newest first when f.Newest.
func List(ctx context.Context, q Querier, f Filter) ([]Event, error) {
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 100
	}
	kindExact, kindPrefix := f.Kind, ""
	if len(f.Kind) > 0 && f.Kind[len(f.Kind)-1] == '.' {
		kindExact, kindPrefix = "", f.Kind
	}
	order := "id"
	if f.Newest {
		order = "id DESC"
	}
	rows, err := q.Query(ctx, `
		SELECT id, kind, COALESCE(conversation_id::text, ''), payload, created_at
		FROM core.events
		WHERE id > $1
		  AND ($2 = '' OR kind = $2)
		  AND ($3 = '' OR starts_with(kind, $3))
		ORDER BY `+order+`
		LIMIT $4`, f.AfterID, kindExact, kindPrefix, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) {
		var e Event
		err := r.Scan(&e.ID, &e.Kind, &e.ConversationID, &e.Payload, &e.CreatedAt)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return out, nil
}
