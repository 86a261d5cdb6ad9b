package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/internal/text"
)

// The dead-letter watch (seed 004): a job of an unattended kind that reaches failed means
// work the owner counts on is not happening, silently. The first death opens an incident; it
// is reported once, a fixed window after the first death (so an outage that never clears is
// still reported); a long gap without deaths closes it. The state is in core.system_flags, so
// a restart does not report it again. Dead jobs are never retried here: that is the owner's.
const (
	IncidentWindow = 10 * time.Minute // from the first death to the report
	IncidentGap    = 6 * time.Hour    // no death for this long closes the incident
	incidentKey    = "deadletter"
)

// Incident is the watch's state.
type Incident struct {
	Open       bool      `json:"open"`        // an incident is open
	FirstDeath time.Time `json:"first_death"` // when its first job died
	LastDeath  time.Time `json:"last_death"`  // when its latest job died
	Reported   bool      `json:"reported"`    // the owner was told
	ClosedAt   time.Time `json:"closed_at"`   // when the last incident closed; deaths before it are old
	Lost       []string  `json:"lost"`        // what was lost, for the message
	Jobs       int       `json:"jobs"`        // how many jobs died in it
}

// unattended reports whether a failed job belonged to nobody waiting: a run of a mission, a
// sentinel's wake, a source's poll. Interactive runs and the owner's own decisions are not
// watched: the owner saw them fail.
func unattended(j FailedJob) bool {
	switch j.Kind {
	case "run.start":
		var a struct {
			Interactive bool `json:"interactive"`
		}
		_ = json.Unmarshal(j.Args, &a)
		return !a.Interactive
	case "run.resume", "action.execute", "action.expire", "queue.probe", "queue.deadletter":
		return false
	}
	return true
}

// lost says what a dead job's work was, in the owner's words.
func lost(j FailedJob) string {
	if j.Kind == "run.start" {
		var a struct {
			Agent string `json:"agent"`
		}
		_ = json.Unmarshal(j.Args, &a)
		return "unattended runs of " + a.Agent
	}
	return j.Kind + " jobs"
}

// WatchDeadLetters looks at the failed unattended jobs once: it opens, reports (once) and
// closes incidents, recording incident.opened, incident.reported and incident.closed. It
// returns the message when this call reported one.
func WatchDeadLetters(ctx context.Context, pool *pgxpool.Pool, now time.Time) (string, error) {
	var message string
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var raw []byte
		var inc Incident
		err := tx.QueryRow(ctx, `SELECT value FROM core.system_flags WHERE key = $1 FOR UPDATE`, incidentKey).Scan(&raw)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("read the dead-letter watch: %w", err)
		}
		if raw != nil {
			if err := json.Unmarshal(raw, &inc); err != nil {
				return fmt.Errorf("read the dead-letter watch: %w", err)
			}
		}
		failed, err := Failed(ctx, pool, false, 500)
		if err != nil {
			return err
		}
		since := inc.ClosedAt
		if inc.Open {
			since = inc.FirstDeath.Add(-time.Nanosecond)
		}
		var deaths []FailedJob
		for _, j := range failed {
			if unattended(j) && j.At().After(since) {
				deaths = append(deaths, j)
			}
		}
		changed := false
		if len(deaths) > 0 {
			first, last := now, time.Time{}
			kinds := map[string]bool{}
			for _, j := range deaths {
				at := j.At()
				if at.Before(first) {
					first = at
				}
				if at.After(last) {
					last = at
				}
				kinds[lost(j)] = true
			}
			if !inc.Open {
				inc = Incident{Open: true, FirstDeath: first, ClosedAt: inc.ClosedAt}
				if _, err := eventlog.Append(ctx, tx, events.IncidentOpened, "", events.IncidentOpenedPayload{FirstDeath: first, Jobs: len(deaths)}); err != nil {
					return err
				}
			}
			inc.LastDeath, inc.Jobs, inc.Lost = last, len(deaths), slices.Sorted(maps.Keys(kinds))
			changed = true
		}
		switch {
		case inc.Open && !inc.Reported && !now.Before(inc.FirstDeath.Add(IncidentWindow)):
			inc.Reported, changed = true, true
			message = incidentMessage(inc)
			if _, err := eventlog.Append(ctx, tx, events.IncidentReported, "", events.IncidentReportedPayload{Message: message, Jobs: inc.Jobs, Lost: inc.Lost}); err != nil {
				return err
			}
		case inc.Open && now.Sub(inc.LastDeath) >= IncidentGap:
			inc = Incident{ClosedAt: now}
			changed = true
			if _, err := eventlog.Append(ctx, tx, events.IncidentClosed, "", events.IncidentClosedPayload{After: IncidentGap.String()}); err != nil {
				return err
			}
		}
		if !changed {
			return nil
		}
		b, _ := json.Marshal(inc)
		_, err = tx.Exec(ctx, `INSERT INTO core.system_flags (key, value) VALUES ($1, $2)
			ON CONFLICT (key) DO UPDATE SET value = $2, updated_at = now()`, incidentKey, b)
		return err
	})
	return message, err
}

// incidentMessage is the one message of an incident: plain, grouped by what was lost, saying
// nothing more will be sent and giving the two commands.
func incidentMessage(inc Incident) string {
	return fmt.Sprintf("Work that runs on its own is not happening: %d %s failed since %s (%s). Nothing more is sent about this outage. "+
		"See them with `buddi jobs --state failed` and run them again with `buddi jobs retry --all` (or stop counting them with `buddi jobs dismiss --all`).",
		inc.Jobs, text.Plural(inc.Jobs, "job"), inc.FirstDeath.Local().Format("15:04 on Jan 2"), strings.Join(inc.Lost, ", "))
}

// DeadLetterArgs is the periodic job that runs the watch.
type DeadLetterArgs struct{}

// Kind is River's name for the job.
func (DeadLetterArgs) Kind() string { return "queue.deadletter" }

// DeadLetterWorker runs the watch; Report, when set, hears the message of a reported incident.
type DeadLetterWorker struct {
	river.WorkerDefaults[DeadLetterArgs]
	Pool   *pgxpool.Pool        // the application's database
	Now    func() time.Time     // the clock; nil is time.Now
	Report func(message string) // hears a reported incident's message; nil: the event only
}

// Work runs the watch once.
func (w *DeadLetterWorker) Work(ctx context.Context, _ *river.Job[DeadLetterArgs]) error {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	msg, err := WatchDeadLetters(ctx, w.Pool, now())
	if err == nil && msg != "" && w.Report != nil {
		w.Report(msg)
	}
	return err
}

// WatchDeadLettersPeriodically is the periodic job buddi serve runs: every minute, and at start.
func WatchDeadLettersPeriodically() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(time.Minute), func() (river.JobArgs, *river.InsertOpts) {
		return DeadLetterArgs{}, nil
	}, &river.PeriodicJobOpts{RunOnStart: true})
}
