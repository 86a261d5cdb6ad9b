package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"buddi/core/eventlog"
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
// mission's prompt and extra as its first turn) and returns the run's id.
type Starter func(ctx context.Context, m Mission, o Occurrence, extra string) (runID string, err error)

// OccurrenceWorker runs OccurrenceArgs jobs: it claims the occurrence (pending → running)
// and starts its run. A mission switched off meanwhile skips it.
type OccurrenceWorker struct {
	river.WorkerDefaults[OccurrenceArgs]
	Store *Store  // the missions
	Start Starter // starts the run
}

// Work claims and starts the occurrence.
func (w *OccurrenceWorker) Work(ctx context.Context, job *river.Job[OccurrenceArgs]) error {
	var m Mission
	var o Occurrence
	claimed := false
	err := pgx.BeginFunc(ctx, w.Store.Pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT id, mission_id, instant, state, reason, covers, run_id FROM core.occurrences WHERE id = $1 FOR UPDATE`,
			job.Args.OccurrenceID).Scan(&o.ID, &o.MissionID, &o.Instant, &o.State, &o.Reason, &o.Covers, &o.RunID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if o.State != "pending" && !(o.State == "running" && o.RunID == "") {
			return nil // done already, or its run started
		}
		if m, err = scanMission(tx.QueryRow(ctx, selectMission+` WHERE id = $1`, o.MissionID)); err != nil {
			return err
		}
		if !m.Enabled {
			_, err := tx.Exec(ctx, `UPDATE core.occurrences SET state = 'skipped', reason = 'the mission was switched off', updated_at = now() WHERE id = $1`, o.ID)
			return err
		}
		claimed = true
		_, err = tx.Exec(ctx, `UPDATE core.occurrences SET state = 'running', updated_at = now() WHERE id = $1`, o.ID)
		return err
	})
	if err != nil || !claimed {
		return err
	}
	extra := ""
	if m.Source == "default" && m.Name == RecapName {
		digest, upto, err := Digest(ctx, w.Store.Pool)
		if err != nil {
			return err
		}
		if digest != "" {
			extra = "What the watchers noticed this week:\n" + digest
		}
		if _, err := w.Store.Pool.Exec(ctx, `UPDATE core.occurrences SET digest_upto = $2 WHERE id = $1`, o.ID, upto); err != nil {
			return err
		}
	}
	runID, err := w.Start(ctx, m, o, extra)
	if err != nil {
		// Left claimable (running, no run) for the job's next attempt; failed only after the
		// last, and then the job fails too, where the dead-letter watch sees it.
		if job.Attempt >= job.MaxAttempts {
			_, _ = w.Store.Pool.Exec(context.WithoutCancel(ctx), `UPDATE core.occurrences SET state = 'failed', reason = $2, updated_at = now() WHERE id = $1`, o.ID, firstLine(err.Error()))
		}
		return fmt.Errorf("start the run of mission %d at %s: %w", m.ID, o.Instant, err)
	}
	return pgx.BeginFunc(context.WithoutCancel(ctx), w.Store.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE core.occurrences SET run_id = $2, updated_at = now() WHERE id = $1`, o.ID, runID); err != nil {
			return err
		}
		_, err := eventlog.Append(ctx, tx, "mission.started", "", map[string]any{"mission_id": m.ID, "occurrence_id": o.ID, "instant": o.Instant, "run_id": runID})
		return err
	})
}

func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
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
