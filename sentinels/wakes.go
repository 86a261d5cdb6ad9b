package sentinels

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"buddi/core/conversation"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/plugins"
)

// Starter starts the run of a wake, running claim in the transaction that starts it, and
// returns its id.
type Starter func(ctx context.Context, sentinel string, findings []plugins.Finding, claim conversation.Claim) (runID string, err error)

// errWoken means the wake was started already.
var errWoken = errors.New("the wake was started already")

// queue adds urgent findings to the sentinel's waiting wake (or opens one), in tx, the
// transaction that recorded them as spoken: a finding that speaks always has its wake. Without
// Coalesce the wake is due at once; with it, a window after the latest finding joined, and
// never later than the max wait after the first.
func (e *Engine) queue(ctx context.Context, tx pgx.Tx, s plugins.Sentinel, fs []plugins.Finding) error {
	now := e.now()
	window, maxWait := time.Duration(0), time.Duration(0)
	if s.Coalesce != nil {
		window, maxWait = s.Coalesce.Window, s.Coalesce.MaxWait
	}
	var id int64
	var raw []byte
	var maxAt time.Time
	err := tx.QueryRow(ctx, `SELECT id, findings, max_at FROM core.sentinel_wakes WHERE sentinel = $1 AND state = 'waiting' FOR UPDATE`, s.ID).Scan(&id, &raw, &maxAt)
	if errors.Is(err, pgx.ErrNoRows) {
		b, _ := json.Marshal(fs)
		_, err := tx.Exec(ctx, `INSERT INTO core.sentinel_wakes (sentinel, findings, first_at, due_at, max_at) VALUES ($1, $2, $3, $4, $5)`,
			s.ID, b, now, now.Add(window), now.Add(maxWait))
		return err
	}
	if err != nil {
		return err
	}
	var have []plugins.Finding
	_ = json.Unmarshal(raw, &have)
	keys := map[string]int{}
	for i, f := range have {
		keys[f.Key] = i
	}
	for _, f := range fs {
		if i, ok := keys[f.Key]; ok {
			have[i] = f
		} else {
			have = append(have, f)
		}
	}
	due := now.Add(window)
	if due.After(maxAt) {
		due = maxAt
	}
	b, _ := json.Marshal(have)
	_, err = tx.Exec(ctx, `UPDATE core.sentinel_wakes SET findings = $2, due_at = $3, updated_at = now() WHERE id = $1`, id, b, due)
	return err
}

// FlushWakes starts the waiting wakes that are due, each one run carrying all its findings,
// without those the owner muted since (a wake left with none is dropped). It returns how many
// runs it started.
func (e *Engine) FlushWakes(ctx context.Context) (int, error) {
	rows, err := e.Pool.Query(ctx, `SELECT id, sentinel, findings FROM core.sentinel_wakes WHERE state = 'waiting' AND due_at <= $1 ORDER BY due_at LIMIT 100`, e.now())
	if err != nil {
		return 0, err
	}
	type wake struct {
		id       int64
		sentinel string
		raw      []byte
	}
	due, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (wake, error) {
		var w wake
		err := r.Scan(&w.id, &w.sentinel, &w.raw)
		return w, err
	})
	if err != nil {
		return 0, err
	}
	started := 0
	for _, w := range due {
		var fs []plugins.Finding
		_ = json.Unmarshal(w.raw, &fs)
		if fs, err = e.unmuted(ctx, e.Pool, fs); err != nil {
			return started, err
		}
		if len(fs) == 0 { // everything in it was muted since
			if _, err := e.Pool.Exec(ctx, `UPDATE core.sentinel_wakes SET state = 'dropped', updated_at = now() WHERE id = $1 AND state = 'waiting'`, w.id); err != nil {
				return started, err
			}
			continue
		}
		claim := func(ctx context.Context, tx pgx.Tx, runID string) error {
			tag, err := tx.Exec(ctx, `UPDATE core.sentinel_wakes SET state = 'woken', run_id = $2, updated_at = now() WHERE id = $1 AND state = 'waiting'`, w.id, runID)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return errWoken
			}
			return nil
		}
		switch {
		case e.Start != nil:
			// The wake is marked woken in the transaction that starts its run: started once.
			if _, err := e.Start(ctx, w.sentinel, fs, claim); err != nil {
				if errors.Is(err, errWoken) {
					continue
				}
				return started, err
			}
		default:
			if err := pgx.BeginFunc(ctx, e.Pool, func(tx pgx.Tx) error { return claim(ctx, tx, "") }); err != nil {
				if errors.Is(err, errWoken) {
					continue
				}
				return started, err
			}
			if e.Wake != nil {
				if err := e.Wake(ctx, w.sentinel, fs); err != nil {
					return started, err
				}
			}
		}
		started++
	}
	return started, nil
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// unmuted drops the findings a mute covers now.
func (e *Engine) unmuted(ctx context.Context, q querier, fs []plugins.Finding) ([]plugins.Finding, error) {
	var out []plugins.Finding
	for _, f := range fs {
		var muted bool
		if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM core.sentinel_mutes WHERE kind = $1 AND (subject = '' OR subject = $2))`,
			f.Kind, f.Subject).Scan(&muted); err != nil {
			return nil, err
		}
		if !muted || f.Kind == "" {
			out = append(out, f)
		}
	}
	return out, nil
}

// AllMuted reports whether the run is a sentinel's wake whose findings are all muted now: its
// report is not delivered (checked again before delivery).
func (e *Engine) AllMuted(ctx context.Context, runID string) (bool, error) {
	var raw []byte
	err := e.Pool.QueryRow(ctx, `SELECT findings FROM core.sentinel_wakes WHERE run_id = $1 AND run_id <> ''`, runID).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var fs []plugins.Finding
	_ = json.Unmarshal(raw, &fs)
	left, err := e.unmuted(ctx, e.Pool, fs)
	return len(fs) > 0 && len(left) == 0, err
}

// WakesArgs is the periodic job that starts the due coalesced wakes.
type WakesArgs struct{}

// Kind is River's name for the job.
func (WakesArgs) Kind() string { return "sentinel.wakes" }

// WakesWorker runs FlushWakes.
type WakesWorker struct {
	river.WorkerDefaults[WakesArgs]
	Engine *Engine // the sentinels' engine
}

// Work starts what is due.
func (w *WakesWorker) Work(ctx context.Context, _ *river.Job[WakesArgs]) error {
	n, err := w.Engine.FlushWakes(ctx)
	if n > 0 {
		_, _ = eventlog.Append(ctx, w.Engine.Pool, events.SentinelWoke, "", events.SentinelWokePayload{Runs: n})
	}
	if err != nil {
		return fmt.Errorf("sentinel wakes: %w", err)
	}
	return nil
}

// FlushWakesPeriodically is the periodic job buddi serve runs: every 15 seconds, and at start.
func FlushWakesPeriodically() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(15*time.Second), func() (river.JobArgs, *river.InsertOpts) {
		return WakesArgs{}, nil
	}, &river.PeriodicJobOpts{RunOnStart: true})
}
