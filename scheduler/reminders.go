package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"buddi/core/conversation"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/internal/timezone"
	"buddi/plugins"
)

// ReminderLimits are the reminders' arithmetic, in code and visible to the owner
// (BUDDI_REMINDER_*): pending wake-ups per agent and in total, the least lead, the furthest
// horizon, and the grace after which a reminder is expired rather than fired ("pay the card
// before midnight" delivered the next day is wrong, not late).
type ReminderLimits struct {
	PerAgent int           `json:"per_agent"` // BUDDI_REMINDER_PER_AGENT, default 20
	Total    int           `json:"total"`     // BUDDI_REMINDER_TOTAL, default 100
	MinLead  time.Duration `json:"min_lead"`  // BUDDI_REMINDER_MIN_LEAD, default 1m
	Horizon  time.Duration `json:"horizon"`   // BUDDI_REMINDER_HORIZON, default 2160h (90 days)
	Grace    time.Duration `json:"grace"`     // BUDDI_REMINDER_GRACE, default 1h
}

// DefaultReminderLimits are the limits when nothing is set.
var DefaultReminderLimits = ReminderLimits{PerAgent: 20, Total: 100, MinLead: time.Minute, Horizon: 90 * 24 * time.Hour, Grace: time.Hour}

// ReminderLimitsFromEnv reads the limits from getenv; a value that does not parse is an error
// naming the variable.
func ReminderLimitsFromEnv(getenv func(string) string) (ReminderLimits, error) {
	l := DefaultReminderLimits
	ints := map[string]*int{"BUDDI_REMINDER_PER_AGENT": &l.PerAgent, "BUDDI_REMINDER_TOTAL": &l.Total}
	for k, p := range ints {
		if v := getenv(k); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return l, fmt.Errorf("%s=%q is not a count", k, v)
			}
			*p = n
		}
	}
	durs := map[string]*time.Duration{"BUDDI_REMINDER_MIN_LEAD": &l.MinLead, "BUDDI_REMINDER_HORIZON": &l.Horizon, "BUDDI_REMINDER_GRACE": &l.Grace}
	for k, p := range durs {
		if v := getenv(k); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return l, fmt.Errorf("%s=%q is not a duration (like 90m or 48h)", k, v)
			}
			*p = d
		}
	}
	return l, nil
}

// Reminder is one promised look.
type Reminder struct {
	ID             int64     `json:"id"`                        // its number
	Agent          string    `json:"agent"`                     // who set it
	ConversationID string    `json:"conversation_id,omitempty"` // where
	Note           string    `json:"note"`                      // what to look at
	DueAt          time.Time `json:"due_at"`                    // when
	State          string    `json:"state"`                     // pending, fired, expired, cancelled
	RunID          string    `json:"run_id,omitempty"`          // the run that looked
}

// ReminderManifest is reminder.set: auto, because a reminder cannot do anything but wake its
// agent with a note. A time without an offset is read in the zone found on this machine.
func ReminderManifest(pool *pgxpool.Pool, limits ReminderLimits) plugins.Manifest {
	return ReminderManifestIn(pool, limits, "")
}

// ReminderManifestIn is ReminderManifest with the owner's zone given (an IANA name; "" or
// one that does not load is the zone found on this machine, as timezone.Local finds it).
func ReminderManifestIn(pool *pgxpool.Pool, limits ReminderLimits, zone string) plugins.Manifest {
	loc, err := timezone.Load(zone)
	if err != nil {
		loc = timezone.Local().Location()
	}
	return plugins.Manifest{Name: "reminder", Version: "1", Description: "A single instant an agent promises to look at.",
		Tools: []plugins.Tool{reminderTool{pool: pool, limits: limits, zone: loc}}}
}

type reminderTool struct {
	pool   *pgxpool.Pool
	limits ReminderLimits
	zone   *time.Location // the owner's: a time without an offset is read in it, and the answer says it
}

func (t reminderTool) Spec() plugins.Spec {
	return plugins.Spec{Name: "reminder.set",
		Description: "Wake yourself at a moment with a note, to check with your tools that something is still true and then report or stay silent.",
		Schema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["at","note"],"properties":{
			"at":{"type":"string","minLength":19,"maxLength":40,"description":"When, RFC 3339 (2026-12-01T09:00:00+01:00); without an offset (2026-12-01T09:00:00) it is in the owner's zone, ` + t.location().String() + `."},
			"note":{"type":"string","minLength":1,"maxLength":1000}}}`),
		Effects: []plugins.Effect{plugins.EffectStateWrite}, Tier: plugins.TierAuto, Timeout: 10 * time.Second}
}

func (t reminderTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	return plugins.Envelope{Summary: "Set a reminder " + string(call.Args)}, nil
}

func (t reminderTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a struct{ At, Note string }
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Result{}, err
	}
	at, err := t.parseAt(a.At)
	if err != nil {
		return plugins.Result{Text: "The time is not RFC 3339, like 2026-12-01T09:00:00+01:00, or a wall time in the owner's zone (" +
			t.location().String() + "), like 2026-12-01T09:00:00.", IsError: true}, nil
	}
	now := call.Now
	if now.IsZero() {
		now = time.Now()
	}
	switch {
	case at.Sub(now) < t.limits.MinLead:
		return plugins.Result{Text: fmt.Sprintf("A reminder needs at least %s of lead.", t.limits.MinLead), IsError: true}, nil
	case at.Sub(now) > t.limits.Horizon:
		return plugins.Result{Text: fmt.Sprintf("A reminder can be at most %s ahead.", t.limits.Horizon), IsError: true}, nil
	}
	var id int64
	err = pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('core.reminders'))`); err != nil {
			return err
		}
		var mine, total int
		if err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE agent = $1), count(*) FROM core.reminders WHERE state = 'pending'`, call.Agent).Scan(&mine, &total); err != nil {
			return err
		}
		if mine >= t.limits.PerAgent {
			return fmt.Errorf("%w: you have %d pending reminders, the most an agent may", errLimit, mine)
		}
		if total >= t.limits.Total {
			return fmt.Errorf("%w: %d reminders are pending, the most buddi keeps", errLimit, total)
		}
		return tx.QueryRow(ctx, `INSERT INTO core.reminders (agent, conversation_id, note, due_at) VALUES ($1, NULLIF($2, '')::uuid, $3, $4) RETURNING id`,
			call.Agent, call.ConversationID, a.Note, at).Scan(&id)
	})
	if errors.Is(err, errLimit) {
		return plugins.Result{Text: err.Error() + ".", IsError: true}, nil
	}
	if err != nil {
		return plugins.Result{}, err
	}
	return plugins.Result{Text: fmt.Sprintf("Reminder %d is set for %s (%s).", id, at.In(t.location()).Format(time.RFC1123), t.location())}, nil
}

// location is the owner's zone (UTC when none was given).
func (t reminderTool) location() *time.Location {
	if t.zone == nil {
		return time.UTC
	}
	return t.zone
}

// parseAt reads a reminder's moment: RFC 3339 with its offset, or a wall time without one in
// the owner's zone.
func (t reminderTool) parseAt(s string) (time.Time, error) {
	if at, err := time.Parse(time.RFC3339, s); err == nil {
		return at, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if at, err := time.ParseInLocation(layout, s, t.location()); err == nil {
			return at, nil
		}
	}
	return time.Time{}, fmt.Errorf("reminder time %q is not RFC 3339", s)
}

var errLimit = errors.New("the reminder is over a limit")

// Reminders lists reminders, newest first: pending ones, or every one with all; agent ""
// lists every agent's.
func Reminders(ctx context.Context, pool *pgxpool.Pool, agent string, all bool) ([]Reminder, error) {
	rows, err := pool.Query(ctx, `SELECT id, agent, COALESCE(conversation_id::text, ''), note, due_at, state, run_id FROM core.reminders
		WHERE ($1 = '' OR agent = $1) AND ($2 OR state = 'pending') ORDER BY due_at DESC LIMIT 500`, agent, all)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Reminder, error) {
		var m Reminder
		err := r.Scan(&m.ID, &m.Agent, &m.ConversationID, &m.Note, &m.DueAt, &m.State, &m.RunID)
		return m, err
	})
}

// CancelReminder cancels a pending reminder.
func CancelReminder(ctx context.Context, pool *pgxpool.Pool, id int64) error {
	tag, err := pool.Exec(ctx, `UPDATE core.reminders SET state = 'cancelled', updated_at = now() WHERE id = $1 AND state = 'pending'`, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("reminder %d is not pending: %w", id, ErrNotFound)
	}
	return nil
}

// Waker starts the run a due reminder wakes, running claim in the transaction that starts it.
type Waker func(ctx context.Context, r Reminder, claim conversation.Claim) (runID string, err error)

// FireReminders fires the reminders due by now (each wakes its agent), and expires the ones
// past their grace. It returns how many it fired and expired.
func FireReminders(ctx context.Context, pool *pgxpool.Pool, limits ReminderLimits, now time.Time, wake Waker) (fired, expired int, err error) {
	rows, err := pool.Query(ctx, `UPDATE core.reminders SET state = 'expired', updated_at = now()
		WHERE state = 'pending' AND due_at < $1 RETURNING id`, now.Add(-limits.Grace))
	if err != nil {
		return 0, 0, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, 0, err
	}
	for _, id := range ids {
		if _, err := eventlog.Append(ctx, pool, events.ReminderExpired, "", events.ReminderExpiredPayload{ReminderID: id, Grace: limits.Grace.String()}); err != nil {
			return 0, len(ids), err
		}
	}
	expired = len(ids)
	rows, err = pool.Query(ctx, `SELECT id, agent, COALESCE(conversation_id::text, ''), note, due_at FROM core.reminders
		WHERE state = 'pending' AND due_at <= $1 ORDER BY due_at LIMIT 100`, now)
	if err != nil {
		return 0, expired, err
	}
	due, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Reminder, error) {
		var r Reminder
		err := row.Scan(&r.ID, &r.Agent, &r.ConversationID, &r.Note, &r.DueAt)
		return r, err
	})
	if err != nil {
		return 0, expired, err
	}
	for _, r := range due {
		// The reminder is marked fired in the transaction that starts its run: fired once.
		claim := func(ctx context.Context, tx pgx.Tx, runID string) error {
			tag, err := tx.Exec(ctx, `UPDATE core.reminders SET state = 'fired', run_id = $2, updated_at = now() WHERE id = $1 AND state = 'pending'`, r.ID, runID)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return errClaimed
			}
			return nil
		}
		if _, err := wake(ctx, r, claim); err != nil {
			if errors.Is(err, errClaimed) {
				continue
			}
			return fired, expired, err
		}
		fired++
	}
	return fired, expired, nil
}

// RemindersArgs is the periodic job that fires due reminders.
type RemindersArgs struct{}

// Kind is River's name for the job.
func (RemindersArgs) Kind() string { return "reminder.fire" }

// RemindersWorker fires due reminders.
type RemindersWorker struct {
	river.WorkerDefaults[RemindersArgs]
	Pool   *pgxpool.Pool    // the application's database
	Limits ReminderLimits   // the grace
	Wake   Waker            // starts each reminder's run
	Now    func() time.Time // the clock; nil is time.Now
}

// Work fires what is due.
func (w *RemindersWorker) Work(ctx context.Context, _ *river.Job[RemindersArgs]) error {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	_, _, err := FireReminders(ctx, w.Pool, w.Limits, now(), w.Wake)
	return err
}

// FireRemindersPeriodically is the periodic job buddi serve runs: every 30 seconds, and at start.
func FireRemindersPeriodically() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(30*time.Second), func() (river.JobArgs, *river.InsertOpts) {
		return RemindersArgs{}, nil
	}, &river.PeriodicJobOpts{RunOnStart: true})
}
