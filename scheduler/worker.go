package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"buddi/core/conversation"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/internal/text"
)

// OccurrenceArgs is the job that runs one owed occurrence; unique per occurrence.
type OccurrenceArgs struct {
	OccurrenceID int64 `json:"occurrence_id"` // the occurrence to run
}

// Kind is River's name for the job.
func (OccurrenceArgs) Kind() string { return "mission.occurrence" }

// InsertOpts makes the job unique per occurrence.
func (OccurrenceArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}, MaxAttempts: 3}
}

// Starter starts the unattended run of an occurrence (a conversation of its own, the
// mission's prompt and extra as its first turn), running claim in the transaction that starts
// it, and returns the run's id.
type Starter func(ctx context.Context, m Mission, o Occurrence, extra string, claim conversation.Claim) (runID string, err error)

// errClaimed means the occurrence's run was started already (a rerun of its job).
var errClaimed = errors.New("the occurrence's run was started already")

// OccurrenceWorker runs OccurrenceArgs jobs: it claims the occurrence (pending → running)
// and starts its run. A mission switched off meanwhile skips it.
type OccurrenceWorker struct {
	river.WorkerDefaults[OccurrenceArgs]
	Store *Store           // the missions
	Start Starter          // starts the run
	Now   func() time.Time // the clock; nil is time.Now
}

// Work starts the occurrence's run, claiming the occurrence (pending → running, with the
// run's id) in the transaction that starts it: a rerun of the job never starts a second run.
func (w *OccurrenceWorker) Work(ctx context.Context, job *river.Job[OccurrenceArgs]) error {
	var m Mission
	var o Occurrence
	err := w.Store.Pool.QueryRow(ctx, `SELECT id, mission_id, instant, state, reason, covers, run_id FROM core.occurrences WHERE id = $1`,
		job.Args.OccurrenceID).Scan(&o.ID, &o.MissionID, &o.Instant, &o.State, &o.Reason, &o.Covers, &o.RunID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.State != "pending" {
		return nil // started already, or settled
	}
	if m, err = w.Store.Get(ctx, o.MissionID); err != nil {
		return err
	}
	if !m.Enabled {
		return w.skip(ctx, o.ID, "the mission was switched off")
	}
	if o.Reason != RunNowReason {
		now := time.Now
		if w.Now != nil {
			now = w.Now
		}
		if late, err := w.late(ctx, m, o, now()); late || err != nil {
			return err
		}
	}
	extra, upto := "", int64(0)
	if m.Source == "default" && m.Name == RecapName {
		digest, last, err := Digest(ctx, w.Store.Pool)
		if err != nil {
			return err
		}
		if digest != "" {
			extra = "What the watchers noticed this week:\n" + digest
		}
		upto = last
	}
	claim := func(ctx context.Context, tx pgx.Tx, runID string) error {
		tag, err := tx.Exec(ctx, `UPDATE core.occurrences SET state = 'running', run_id = $2, digest_upto = $3, updated_at = now()
			WHERE id = $1 AND state = 'pending'`, o.ID, runID, upto)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errClaimed
		}
		_, err = eventlog.Append(ctx, tx, events.MissionStarted, "", events.MissionStartedPayload{MissionID: m.ID, OccurrenceID: o.ID, Instant: o.Instant, RunID: runID})
		return err
	}
	if _, err := w.Start(ctx, m, o, extra, claim); err != nil {
		if errors.Is(err, errClaimed) {
			return nil
		}
		// Still pending, for the job's next attempt; failed only after the last, and then
		// the job fails too, where the dead-letter watch sees it.
		if job.Attempt >= job.MaxAttempts {
			_, _ = w.Store.Pool.Exec(context.WithoutCancel(ctx), `UPDATE core.occurrences SET state = 'failed', reason = $2, updated_at = now()
				WHERE id = $1 AND state = 'pending'`, o.ID, text.FirstLine(err.Error()))
		}
		return fmt.Errorf("start the run of mission %d at %s: %w", m.ID, o.Instant, err)
	}
	return nil
}

// late settles an occurrence whose run would now break its mission's misfire policy (its job
// ran late: buddi stopped, or the queue was behind) and says whether it did. Under coalesce
// and latest-only a later instant that is due owes this one's run: the mission is
// materialised up to now, which folds this occurrence into that run. Under
// skip-after-deadline an occurrence past its deadline (and past Grace) is skipped.
func (w *OccurrenceWorker) late(ctx context.Context, m Mission, o Occurrence, now time.Time) (bool, error) {
	switch m.Misfire {
	case Coalesce, LatestOnly:
		sched, err := Parse(m.Cron, m.Timezone)
		if err != nil {
			return false, err
		}
		if next := sched.Next(o.Instant); next.IsZero() || next.After(now) {
			return false, nil
		}
		if _, _, err := w.Store.materialiseOne(ctx, m.ID, now); err != nil {
			return false, fmt.Errorf("materialise mission %d before its late occurrence %d: %w", m.ID, o.ID, err)
		}
		var state string
		if err := w.Store.Pool.QueryRow(ctx, `SELECT state FROM core.occurrences WHERE id = $1`, o.ID).Scan(&state); err != nil {
			return false, err
		}
		return state != "pending", nil
	case SkipAfterDeadline:
		if now.Sub(o.Instant) <= max(m.Deadline, Grace) {
			return false, nil
		}
		return true, w.skip(ctx, o.ID, "past its deadline of "+m.Deadline.String())
	}
	return false, nil
}

// skip settles a pending occurrence as skipped, saying why.
func (w *OccurrenceWorker) skip(ctx context.Context, id int64, reason string) error {
	_, err := w.Store.Pool.Exec(ctx, `UPDATE core.occurrences SET state = 'skipped', reason = $2, updated_at = now()
		WHERE id = $1 AND state = 'pending'`, id, reason)
	return err
}

// MaterialiseArgs is the periodic job that materialises what is due.
type MaterialiseArgs struct{}

// Kind is River's name for the job.
func (MaterialiseArgs) Kind() string { return "mission.materialise" }

// MaterialiseWorker runs Materialise with its clock.
type MaterialiseWorker struct {
	river.WorkerDefaults[MaterialiseArgs]
	Store *Store           // the missions
	Now   func() time.Time // the clock; nil is time.Now
}

// Work materialises up to now.
func (w *MaterialiseWorker) Work(ctx context.Context, _ *river.Job[MaterialiseArgs]) error {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	_, _, err := w.Store.Materialise(ctx, now())
	return err
}

// MaterialisePeriodically is the periodic job buddi serve runs: every 30 seconds, and at
// start (a machine that slept catches up at once: the record is the rows, not this timer).
func MaterialisePeriodically() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(30*time.Second), func() (river.JobArgs, *river.InsertOpts) {
		return MaterialiseArgs{}, nil
	}, &river.PeriodicJobOpts{RunOnStart: true})
}
