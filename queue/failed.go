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
)

// QuietAfter is how old a failed job is when it counts as dismissed without a write
// (seed 004, "Failed jobs are decisions"): an old outage cannot hold the count red for ever.
const QuietAfter = 14 * 24 * time.Hour

// FailedJob is a job that will not run again unless the owner says so: discarded after its
// attempts, or cancelled as permanent.
type FailedJob struct {
	ID          int64           `json:"id"`                     // River's job id
	Kind        string          `json:"kind"`                   // run.start, action.execute, …
	Queue       string          `json:"queue"`                  // the queue it ran on
	State       string          `json:"state"`                  // discarded or cancelled
	Attempts    int             `json:"attempts"`               // attempts made
	Error       string          `json:"error"`                  // the last attempt's error
	Args        json.RawMessage `json:"args"`                   // the job's arguments
	FinalizedAt *time.Time      `json:"finalized_at,omitempty"` // when it stopped being tried
	CreatedAt   time.Time       `json:"created_at"`             // when it was enqueued
	Dismissed   bool            `json:"dismissed"`              // by the owner, or by age
}

// At is when the job stopped being tried (when River recorded no end: when it was enqueued).
func (j FailedJob) At() time.Time {
	if j.FinalizedAt != nil {
		return *j.FinalizedAt
	}
	return j.CreatedAt
}

// ErrNotFailed means the job does not exist or has not failed.
var ErrNotFailed = errors.New("queue: no such failed job")

// Failed lists the failed jobs, newest first; dismissed ones (by the owner or by age) only
// when all is set.
func Failed(ctx context.Context, pool *pgxpool.Pool, all bool, limit int) ([]FailedJob, error) {
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	rows, err := pool.Query(ctx, `
		SELECT j.id, j.kind, j.queue, j.state::text, j.attempt, COALESCE(j.errors[array_length(j.errors, 1)]->>'error', ''),
		       j.args, j.finalized_at, j.created_at,
		       (d.job_id IS NOT NULL OR COALESCE(j.finalized_at, j.created_at) < now() - $2::interval)
		FROM river.river_job j LEFT JOIN core.job_dismissals d ON d.job_id = j.id
		WHERE j.state IN ('discarded', 'cancelled') AND j.errors IS NOT NULL
		  AND ($1 OR (d.job_id IS NULL AND COALESCE(j.finalized_at, j.created_at) >= now() - $2::interval))
		ORDER BY j.id DESC LIMIT $3`, all, QuietAfter.String(), limit)
	if err != nil {
		return nil, fmt.Errorf("list failed jobs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (FailedJob, error) {
		var f FailedJob
		err := r.Scan(&f.ID, &f.Kind, &f.Queue, &f.State, &f.Attempts, &f.Error, &f.Args, &f.FinalizedAt, &f.CreatedAt, &f.Dismissed)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("list failed jobs: %w", err)
	}
	return out, nil
}

// Dismiss keeps a failed job on record but out of every count that asks for something.
func Dismiss(ctx context.Context, pool *pgxpool.Pool, id int64, by string) error {
	tag, err := pool.Exec(ctx, `INSERT INTO core.job_dismissals (job_id, dismissed_by)
		SELECT id, $2 FROM river.river_job WHERE id = $1 AND state IN ('discarded', 'cancelled')
		ON CONFLICT (job_id) DO NOTHING`, id, by)
	if err != nil {
		return fmt.Errorf("dismiss job %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		var exists bool
		_ = pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM core.job_dismissals WHERE job_id = $1)`, id).Scan(&exists)
		if !exists {
			return fmt.Errorf("job %d: %w", id, ErrNotFailed)
		}
	}
	return nil
}

// Retry runs a failed job again now (lifting its attempt cap) and clears its dismissal.
func (q *Queue) Retry(ctx context.Context, pool *pgxpool.Pool, id int64) error {
	return Retry(ctx, pool, q.client, id)
}

// Retry runs a failed job again now through client (an insert-only client will do), lifting
// its attempt cap, and clears its dismissal.
func Retry(ctx context.Context, pool *pgxpool.Pool, client *river.Client[pgx.Tx], id int64) error {
	var state string
	if err := pool.QueryRow(ctx, `SELECT state::text FROM river.river_job WHERE id = $1`, id).Scan(&state); err != nil || (state != "discarded" && state != "cancelled") {
		return fmt.Errorf("job %d: %w", id, ErrNotFailed)
	}
	if _, err := pool.Exec(ctx, `UPDATE river.river_job SET max_attempts = attempt + 1 WHERE id = $1 AND max_attempts <= attempt`, id); err != nil {
		return fmt.Errorf("retry job %d: %w", id, err)
	}
	if _, err := client.JobRetry(ctx, id); err != nil {
		return fmt.Errorf("retry job %d: %w", id, err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM core.job_dismissals WHERE job_id = $1`, id); err != nil {
		return fmt.Errorf("retry job %d: %w", id, err)
	}
	return nil
}
