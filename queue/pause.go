package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"buddi/core/eventlog"
	"buddi/core/events"
)

const pausedKey = "paused"

// Paused reports whether the owner paused all work, and since when.
func Paused(ctx context.Context, q eventlog.Querier) (bool, time.Time, error) {
	var raw []byte
	err := q.QueryRow(ctx, `SELECT value FROM core.system_flags WHERE key = $1`, pausedKey).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, time.Time{}, nil
	}
	if err != nil {
		return false, time.Time{}, fmt.Errorf("read whether work is paused: %w", err)
	}
	var v struct {
		Since time.Time `json:"since"`
	}
	_ = json.Unmarshal(raw, &v)
	return true, v.Since, nil
}

// Pause stops all work (buddi pause): every queue stops fetching, and sentinels are never due,
// until Resume. It is recorded in core.system_flags, so a restart stays paused.
func Pause(ctx context.Context, pool *pgxpool.Pool, client *river.Client[pgx.Tx]) error {
	b, _ := json.Marshal(map[string]any{"since": time.Now().UTC()})
	if _, err := pool.Exec(ctx, `INSERT INTO core.system_flags (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, pausedKey, b); err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	if err := client.QueuePause(ctx, "*", nil); err != nil {
		return fmt.Errorf("pause the queues: %w", err)
	}
	_, err := eventlog.Append(ctx, pool, events.WorkPaused, "", events.None{})
	return err
}

// Resume starts all work again.
func Resume(ctx context.Context, pool *pgxpool.Pool, client *river.Client[pgx.Tx]) error {
	if _, err := pool.Exec(ctx, `DELETE FROM core.system_flags WHERE key = $1`, pausedKey); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if err := client.QueueResume(ctx, "*", nil); err != nil {
		return fmt.Errorf("resume the queues: %w", err)
	}
	_, err := eventlog.Append(ctx, pool, events.WorkResumed, "", events.None{})
	return err
}

// HoldIfPaused pauses the queues again at start when the owner paused work (queues that did
// not exist when they paused are paused too).
func HoldIfPaused(ctx context.Context, pool *pgxpool.Pool, client *river.Client[pgx.Tx]) error {
	paused, _, err := Paused(ctx, pool)
	if err != nil || !paused {
		return err
	}
	return client.QueuePause(ctx, "*", nil)
}
