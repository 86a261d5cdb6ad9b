package sentinels

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoFinding is Open's and Unmute's answer for a finding or mute that does not exist.
var ErrNoFinding = errors.New("sentinels: no such finding or mute")

// Mute is a kind of finding (or one subject of it) the owner asked never to be told about.
type Mute struct {
	ID      int64     `json:"id"`                // its number
	Kind    string    `json:"kind"`              // the kind of finding
	Subject string    `json:"subject,omitempty"` // only this subject; "" is every subject
	Created time.Time `json:"created_at"`        // when the owner muted it
}

// Mutes lists the mutes, oldest first.
func (e *Engine) Mutes(ctx context.Context) ([]Mute, error) {
	rows, err := e.Pool.Query(ctx, `SELECT id, kind, subject, created_at FROM core.sentinel_mutes ORDER BY created_at, id LIMIT 500`)
	if err != nil {
		return nil, fmt.Errorf("list the mutes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Mute, error) {
		var m Mute
		err := r.Scan(&m.ID, &m.Kind, &m.Subject, &m.Created)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("list the mutes: %w", err)
	}
	return out, nil
}

// Unmute removes mute id: that kind (or subject) speaks again from its next finding.
func (e *Engine) Unmute(ctx context.Context, id int64) error {
	tag, err := e.Pool.Exec(ctx, `DELETE FROM core.sentinel_mutes WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("unmute %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("mute %d: %w", id, ErrNoFinding)
	}
	return nil
}

// Open returns sentinel's finding key when it is not resolved, or ErrNoFinding.
func (e *Engine) Open(ctx context.Context, sentinel, key string) (Finding, error) {
	var f Finding
	err := e.Pool.QueryRow(ctx, `SELECT sentinel, key, severity, owner_line, kind, subject, last_seen, snoozed_until, not_needed
		FROM core.sentinel_findings WHERE sentinel = $1 AND key = $2 AND resolved_at IS NULL`, sentinel, key).
		Scan(&f.Sentinel, &f.Key, &f.Severity, &f.OwnerLine, &f.Kind, &f.Subject, &f.LastSeen, &f.Snoozed, &f.NotNeeded)
	if errors.Is(err, pgx.ErrNoRows) {
		return Finding{}, fmt.Errorf("finding %s of %s: %w", key, sentinel, ErrNoFinding)
	}
	if err != nil {
		return Finding{}, fmt.Errorf("read finding %s of %s: %w", key, sentinel, err)
	}
	return f, nil
}
