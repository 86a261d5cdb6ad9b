// Package sources runs the plugins' sources (seed 004, "Drop-in tools and skills"): pollers
// the system invokes, each owning its cursor and its transaction. Core decides only when one is
// due, and from its ledger (core.source_runs), not from a timer: after a sleep or a restart a
// source that missed three periods polls once, not three times. A poll hands work to an agent
// through plugins.EnqueueRun, which starts an unattended run in a conversation of its own and is
// idempotent on (source, dedup key) (core.source_enqueues), so a poll that crashed between its
// enqueue and its own commit recovers without a second run. A source notifies nobody: a poll
// that fails records one sentence and backs off, and core tells the owner once when a source
// has failed FailuresToTell times in a row. While buddi is paused nothing polls.
//
// Each source runs as an actor under root/sources (Children).
package sources

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/conversation"
	"buddi/core/eventlog"
	"buddi/core/notify"
	"buddi/core/redact"
	"buddi/plugins"
	"buddi/queue"
)

// Defaults of the Engine's zero fields.
const (
	// PollTimeout bounds one poll.
	PollTimeout = 2 * time.Minute
	// Backoff is how long a source waits after its first failure in a row; each failure
	// that follows doubles it, up to MaxBackoff.
	Backoff = 30 * time.Second
	// MaxBackoff is the longest a failing source waits between polls.
	MaxBackoff = time.Hour
	// FailuresToTell is how many failures in a row tell the owner (once per streak).
	FailuresToTell = 3
)

// NoticeKind is the kind of the owner's notice of a source that keeps failing.
const NoticeKind = "source"

// Starter starts an unattended run of agentID with prompt, asked for by source, in a
// conversation of its own, and runs claim in the transaction that enqueues it (so the run
// and its dedup row are written together or not at all). It returns the run's id.
type Starter func(ctx context.Context, source, agentID, prompt string, claim conversation.Claim) (runID string, err error)

// Tell is notifyOwner as the engine calls it.
type Tell func(ctx context.Context, n notify.Notice)

// Engine decides when each source is due and runs its polls against the database.
type Engine struct {
	Pool  *pgxpool.Pool    // the ledger and the dedup rows
	Start Starter          // starts the runs polls ask for; nil refuses them
	Tell  Tell             // tells the owner of a source that keeps failing; nil tells no one
	Scrub redact.Scrubber  // takes stored secrets out of a failure's sentence; nil keeps it
	Log   *slog.Logger     // hears each failure's whole cause; nil discards
	Now   func() time.Time // the clock; nil is time.Now

	PollTimeout    time.Duration // default PollTimeout
	Backoff        time.Duration // default Backoff
	MaxBackoff     time.Duration // default MaxBackoff
	FailuresToTell int           // default FailuresToTell
}

func (e *Engine) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

func (e *Engine) log() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log.With("service", "sources")
}

func orDefault[T time.Duration | int](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// backoff is the wait after n failures in a row (n ≥ 1).
func (e *Engine) backoff(n int) time.Duration {
	d, ceiling := orDefault(e.Backoff, Backoff), orDefault(e.MaxBackoff, MaxBackoff)
	for i := 1; i < n && d < ceiling; i++ {
		d *= 2
	}
	return min(d, ceiling)
}

// ledger is what core.source_runs says of one source.
type ledger struct {
	lastOK      *time.Time // the start of its last successful poll
	failures    int        // failed polls since then
	lastFailed  *time.Time // the start of the latest of them
	streakStart int64      // the first of them (names the owner's notice)
}

func (e *Engine) ledger(ctx context.Context, q eventlog.Querier, id string) (ledger, error) {
	var l ledger
	var first *int64
	err := q.QueryRow(ctx, `WITH ok AS (SELECT id, started_at FROM core.source_runs WHERE source = $1 AND state = 'ok' ORDER BY id DESC LIMIT 1),
		streak AS (SELECT id, started_at FROM core.source_runs WHERE source = $1 AND state = 'failed' AND id > COALESCE((SELECT id FROM ok), 0))
		SELECT (SELECT started_at FROM ok), (SELECT count(*) FROM streak),
			(SELECT started_at FROM streak ORDER BY id DESC LIMIT 1), (SELECT min(id) FROM streak)`, id).Scan(&l.lastOK, &l.failures, &l.lastFailed, &first)
	if err != nil {
		return l, fmt.Errorf("source %s: read its ledger: %w", id, err)
	}
	if first != nil {
		l.streakStart = *first
	}
	return l, nil
}

// next is when the source is next due by l: a period after its last success, or, while it
// fails, its backoff after the latest failure; now when it never ran.
func (e *Engine) next(s plugins.Source, l ledger, now time.Time) time.Time {
	switch {
	case l.failures > 0 && l.lastFailed != nil:
		return l.lastFailed.Add(e.backoff(l.failures))
	case l.lastOK != nil:
		return l.lastOK.Add(s.Period)
	default:
		return now
	}
}

// Due reports whether s is due by its ledger, and when it is (next) due. A paused buddi
// (buddi pause) has nothing due.
func (e *Engine) Due(ctx context.Context, s plugins.Source) (due bool, next time.Time, err error) {
	now := e.now()
	paused, _, err := queue.Paused(ctx, e.Pool)
	if err != nil {
		return false, time.Time{}, fmt.Errorf("source %s: %w", s.ID, err)
	}
	l, err := e.ledger(ctx, e.Pool, s.ID)
	if err != nil {
		return false, time.Time{}, err
	}
	next = e.next(s, l, now)
	if paused {
		return false, next, nil
	}
	return !now.Before(next), next, nil
}

// Tick polls s once, due or not: the ledger's row first, then the poll, then its outcome. A
// failure is recorded as one sentence, backs the source off, and the owner is told once the
// streak reaches FailuresToTell. A poll that panics is recorded the same way and the panic
// goes on (to the source's actor, whose supervisor restarts it). It returns the runs the poll
// started.
func (e *Engine) Tick(ctx context.Context, s plugins.Source) (enqueued int, err error) {
	now := e.now()
	// Only this source's actor polls it: a row still running is one a stopped buddi left.
	if _, err := e.Pool.Exec(ctx, `UPDATE core.source_runs SET state = 'failed', finished_at = $2,
		error = 'the poll did not finish: buddi stopped during it' WHERE source = $1 AND state = 'running'`, s.ID, now); err != nil {
		return 0, fmt.Errorf("source %s: close its unfinished polls: %w", s.ID, err)
	}
	var runID int64
	if err := e.Pool.QueryRow(ctx, `INSERT INTO core.source_runs (source, started_at) VALUES ($1, $2) RETURNING id`, s.ID, now).Scan(&runID); err != nil {
		return 0, fmt.Errorf("source %s: record the poll: %w", s.ID, err)
	}
	var started atomic.Int64
	func() {
		defer func() {
			if r := recover(); r != nil {
				e.failed(context.WithoutCancel(ctx), s, runID, int(started.Load()), fmt.Errorf("the poll panicked: %v", r))
				panic(r)
			}
		}()
		limit := orDefault(e.PollTimeout, PollTimeout)
		pctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		if s.Poll == nil {
			err = errors.New("the source has no poll")
			return
		}
		err = s.Poll(pctx, e.enqueuer(s, runID, &started))
		switch {
		case err == nil:
		case ctx.Err() != nil:
			err = fmt.Errorf("the poll was cut off: buddi stopped during it (%w)", err)
		case errors.Is(pctx.Err(), context.DeadlineExceeded):
			err = fmt.Errorf("the poll took longer than %v (%w)", limit, err)
		}
	}()
	enqueued = int(started.Load())
	if err != nil {
		e.failed(context.WithoutCancel(ctx), s, runID, enqueued, err)
		return enqueued, fmt.Errorf("source %s: %w", s.ID, err)
	}
	if _, err := e.Pool.Exec(ctx, `UPDATE core.source_runs SET state = 'ok', finished_at = $2, enqueued = $3, next_due = $4 WHERE id = $1`,
		runID, e.now(), enqueued, now.Add(s.Period)); err != nil {
		return enqueued, fmt.Errorf("source %s: record the poll's end: %w", s.ID, err)
	}
	return enqueued, nil
}

// failed records run as failed with cause's sentence, and tells the owner when the streak it
// ends has reached FailuresToTell (the notice's key names the streak: told once).
func (e *Engine) failed(ctx context.Context, s plugins.Source, run int64, enqueued int, cause error) {
	msg := e.sentence(cause)
	e.log().Warn("a source's poll failed", "source", s.ID, "err", cause)
	var l ledger
	err := pgx.BeginFunc(ctx, e.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE core.source_runs SET state = 'failed', finished_at = $2, error = $3, enqueued = $4 WHERE id = $1`,
			run, e.now(), msg, enqueued); err != nil {
			return err
		}
		var err error
		if l, err = e.ledger(ctx, tx, s.ID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE core.source_runs SET next_due = $2 WHERE id = $1`, run, e.next(s, l, e.now()))
		return err
	})
	if err != nil {
		e.log().Error("a source's failure was not recorded", "source", s.ID, "run", run, "err", err)
		return
	}
	if l.failures < orDefault(e.FailuresToTell, FailuresToTell) || e.Tell == nil {
		return
	}
	name := s.ID
	if s.Description != "" {
		name += " (" + s.Description + ")"
	}
	e.Tell(ctx, notify.Notice{
		Key:     fmt.Sprintf("source:%s:%d", s.ID, l.streakStart),
		Kind:    NoticeKind,
		Urgency: notify.Normal,
		Title:   fmt.Sprintf("The source %s keeps failing", s.ID),
		Body: fmt.Sprintf("%s has failed %d times in a row, the last time with: %s. buddi keeps trying, less often, and says no more about it unless it works and fails again. `buddi sources list` shows it.",
			name, l.failures, msg),
	})
}

// sentence is a failure as the owner reads it: its first line, bounded, without secrets.
func (e *Engine) sentence(err error) string {
	msg, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
	msg = strings.TrimSpace(msg)
	if msg == "" {
		msg = "the poll failed"
	}
	if e.Scrub != nil {
		msg = e.Scrub.String(msg)
	}
	const limit = 300
	if utf8.RuneCountInString(msg) > limit {
		msg = string([]rune(msg)[:limit]) + "…"
	}
	return redact.Storable(msg)
}
