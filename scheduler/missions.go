package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/internal/timezone"
)

// The misfire policies: what a machine that slept through instants owes.
const (
	ReplayAll          = "replay-all"          // every missed instant runs, in order
	Coalesce           = "coalesce"            // the missed instants run once, at the latest, told how many it stands for
	LatestOnly         = "latest-only"         // only the latest missed instant runs; the others are skipped
	SkipAfterDeadline  = "skip-after-deadline" // a missed instant runs only within its deadline
	Grace              = 2 * time.Minute       // an instant this recent is on time, not missed
	MaxPerMaterialise  = 10_000                // instants materialised per mission per pass (the rest next pass)
	defaultMissionWait = time.Hour
)

// Mission is a scheduled piece of work: a prompt for an agent on a cron schedule.
type Mission struct {
	ID               int64         `json:"id"`                  // its number
	Name             string        `json:"name"`                // a name for the owner
	Agent            string        `json:"agent"`               // the agent's id
	Prompt           string        `json:"prompt"`              // what the agent is asked each time
	Cron             string        `json:"cron"`                // the schedule, five fields
	Timezone         string        `json:"timezone"`            // the IANA zone the schedule's wall times are in
	Misfire          string        `json:"misfire"`             // what missed instants are owed
	Deadline         time.Duration `json:"deadline"`            // skip-after-deadline's deadline
	ScheduleRevision int           `json:"schedule_revision"`   // raised when the schedule changes
	Enabled          bool          `json:"enabled"`             // switched on
	AlwaysDeliver    bool          `json:"always_deliver"`      // the owner opted in to every answer
	Source           string        `json:"source"`              // owner, agent, or the plugin that suggested it
	CreatedAt        time.Time     `json:"created_at"`          // when it was added
	StopWhen         string        `json:"stop_when,omitempty"` // an agent's mission: its words for done
	EndsOn           *time.Time    `json:"ends_on,omitempty"`   // an agent's mission: after this it ends
	QuietRuns        int           `json:"quiet_runs"`          // silent runs in a row
}

// Occurrence is one materialised instant of a mission.
type Occurrence struct {
	ID        int64     `json:"id"`               // its number
	MissionID int64     `json:"mission_id"`       // its mission
	Instant   time.Time `json:"instant"`          // the scheduled moment
	State     string    `json:"state"`            // pending, running, delivered, silent, skipped, failed
	Reason    string    `json:"reason,omitempty"` // why it is in that state
	Covers    int       `json:"covers"`           // how many instants its run stands for (coalesce)
	RunID     string    `json:"run_id,omitempty"` // its run, once started
}

// ErrNotFound means no mission has that id.
var ErrNotFound = errors.New("scheduler: no such mission")

// Inserter enqueues a job in a transaction.
type Inserter interface {
	// InsertTx enqueues args in tx.
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Store keeps missions and occurrences.
type Store struct {
	Pool   *pgxpool.Pool // the application's database
	Insert Inserter      // enqueues each owed occurrence's job; nil enqueues none
	Zone   string        // the owner's IANA zone, a new mission's when it names none; "" is the one found on this machine
}

// OwnerZone is the zone a mission that names none is in: Zone, else the one found on this
// machine (timezone.Local; UTC when nothing names one).
func (s *Store) OwnerZone() string {
	if s.Zone != "" {
		return s.Zone
	}
	return timezone.Local().Name
}

// Add records a mission after checking its schedule and policy; a mission that names no
// zone is in the owner's (OwnerZone).
func (s *Store) Add(ctx context.Context, m Mission) (Mission, error) {
	if m.Timezone == "" {
		m.Timezone = s.OwnerZone()
	}
	if _, err := Parse(m.Cron, m.Timezone); err != nil {
		return m, err
	}
	switch m.Misfire {
	case "":
		m.Misfire = Coalesce
	case ReplayAll, Coalesce, LatestOnly, SkipAfterDeadline:
	default:
		return m, fmt.Errorf("misfire policy %q: use replay-all, coalesce, latest-only or skip-after-deadline", m.Misfire)
	}
	if m.Deadline <= 0 {
		m.Deadline = defaultMissionWait
	}
	if m.Source == "" {
		m.Source = "owner"
	}
	err := s.Pool.QueryRow(ctx, `INSERT INTO core.missions (name, agent, prompt, cron, timezone, misfire, deadline, always_deliver, source, stop_when, ends_on)
		VALUES ($1, $2, $3, $4, $5, $6, $7::interval, $8, $9, $10, $11) RETURNING id, schedule_revision, enabled, created_at`,
		m.Name, m.Agent, m.Prompt, m.Cron, m.Timezone, m.Misfire, m.Deadline.String(), m.AlwaysDeliver, m.Source, m.StopWhen, m.EndsOn).
		Scan(&m.ID, &m.ScheduleRevision, &m.Enabled, &m.CreatedAt)
	if err != nil {
		return m, fmt.Errorf("add mission %s: %w", m.Name, err)
	}
	_, err = eventlog.Append(ctx, s.Pool, events.MissionAdded, "", events.MissionAddedPayload{MissionID: m.ID, Agent: m.Agent, Cron: m.Cron, Timezone: m.Timezone})
	return m, err
}

const selectMission = `SELECT id, name, agent, prompt, cron, timezone, misfire, extract(epoch from deadline)::bigint, schedule_revision,
	enabled, always_deliver, source, created_at, stop_when, ends_on, quiet_runs FROM core.missions`

func scanMission(row pgx.Row) (Mission, error) {
	var m Mission
	var secs int64
	err := row.Scan(&m.ID, &m.Name, &m.Agent, &m.Prompt, &m.Cron, &m.Timezone, &m.Misfire, &secs, &m.ScheduleRevision,
		&m.Enabled, &m.AlwaysDeliver, &m.Source, &m.CreatedAt, &m.StopWhen, &m.EndsOn, &m.QuietRuns)
	m.Deadline = time.Duration(secs) * time.Second
	return m, err
}

// List returns every mission.
func (s *Store) List(ctx context.Context) ([]Mission, error) {
	rows, err := s.Pool.Query(ctx, selectMission+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list missions: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Mission, error) { return scanMission(r) })
}

// Get returns mission id.
func (s *Store) Get(ctx context.Context, id int64) (Mission, error) {
	m, err := scanMission(s.Pool.QueryRow(ctx, selectMission+` WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return m, fmt.Errorf("mission %d: %w", id, ErrNotFound)
	}
	return m, err
}

// SetEnabled switches a mission on or off. Switching on starts from now: what was missed
// while it was off is not owed.
func (s *Store) SetEnabled(ctx context.Context, id int64, on bool, now time.Time) error {
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		// Switching a mission back on drops its end.
		tag, err := tx.Exec(ctx, `UPDATE core.missions SET enabled = $2, ended_at = NULL,
			ends_on = CASE WHEN $2 THEN NULL ELSE ends_on END WHERE id = $1`, id, on)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("mission %d: %w", id, ErrNotFound)
		}
		if on {
			if _, err := tx.Exec(ctx, `INSERT INTO core.last_materialized (mission_id, schedule_revision, instant)
				SELECT id, schedule_revision, $2 FROM core.missions WHERE id = $1
				ON CONFLICT (mission_id) DO UPDATE SET instant = GREATEST(core.last_materialized.instant, $2)`, id, now); err != nil {
				return err
			}
		}
		kind := events.MissionDisabled
		if on {
			kind = events.MissionEnabled
		}
		_, err = eventlog.Append(ctx, tx, kind, "", events.MissionSwitchedPayload{MissionID: id})
		return err
	})
}

// Occurrences lists a mission's occurrences, newest first.
func (s *Store) Occurrences(ctx context.Context, id int64, limit int) ([]Occurrence, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.Pool.Query(ctx, `SELECT id, mission_id, instant, state, reason, covers, run_id FROM core.occurrences
		WHERE mission_id = $1 ORDER BY instant DESC, id DESC LIMIT $2`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("list occurrences of %d: %w", id, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Occurrence, error) {
		var o Occurrence
		err := r.Scan(&o.ID, &o.MissionID, &o.Instant, &o.State, &o.Reason, &o.Covers, &o.RunID)
		return o, err
	})
}

// RunNow materialises an occurrence at now for mission id (the owner's "run now").
func (s *Store) RunNow(ctx context.Context, id int64, now time.Time) (int64, error) {
	var occ int64
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		m, err := scanMission(tx.QueryRow(ctx, selectMission+` WHERE id = $1`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("mission %d: %w", id, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO core.occurrences (mission_id, schedule_revision, instant, reason)
			VALUES ($1, $2, $3, $4) RETURNING id`, m.ID, m.ScheduleRevision, now.Truncate(time.Microsecond), RunNowReason).Scan(&occ); err != nil {
			return fmt.Errorf("run mission %d now: %w", id, err)
		}
		return s.enqueue(ctx, tx, occ)
	})
	return occ, err
}

func (s *Store) enqueue(ctx context.Context, tx pgx.Tx, occ int64) error {
	if s.Insert == nil {
		return nil
	}
	_, err := s.Insert.InsertTx(ctx, tx, OccurrenceArgs{OccurrenceID: occ}, nil)
	return err
}

// Materialise writes every enabled mission's instants up to now, each mission in one
// transaction with its last-materialised mark and the jobs of what is owed, so a restart in
// the middle neither loses nor repeats an occurrence. It returns how many occurrences it
// wrote and how many of them are owed a run.
func (s *Store) Materialise(ctx context.Context, now time.Time) (written, owed int, err error) {
	missions, err := s.List(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, m := range missions {
		if !m.Enabled {
			continue
		}
		w, o, err := s.materialiseOne(ctx, m.ID, now)
		if err != nil {
			return written, owed, err
		}
		written, owed = written+w, owed+o
	}
	return written, owed, nil
}

func (s *Store) materialiseOne(ctx context.Context, id int64, now time.Time) (written, owed int, err error) {
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		m, err := scanMission(tx.QueryRow(ctx, selectMission+` WHERE id = $1 AND enabled FOR UPDATE`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if m.EndsOn != nil && now.After(*m.EndsOn) {
			// Past its end: switched off quietly, still listed (ended), no message.
			if _, err := tx.Exec(ctx, `UPDATE core.missions SET enabled = false, ended_at = $2 WHERE id = $1`, m.ID, now); err != nil {
				return err
			}
			_, err := eventlog.Append(ctx, tx, events.MissionEnded, "", events.MissionEndedPayload{MissionID: m.ID, EndsOn: m.EndsOn})
			return err
		}
		sched, err := Parse(m.Cron, m.Timezone)
		if err != nil {
			return err
		}
		from := m.CreatedAt
		var rev int
		var last time.Time
		if err := tx.QueryRow(ctx, `SELECT schedule_revision, instant FROM core.last_materialized WHERE mission_id = $1`, m.ID).Scan(&rev, &last); err == nil && rev == m.ScheduleRevision {
			from = last
		} else if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		// Replay-all owes each instant for itself, so a long gap may take several passes.
		// Every other policy decides over the whole gap at once (in parts of at most
		// MaxPerMaterialise rows): its promise is about the latest instant, which only the
		// end of the gap knows.
		carried := 0
		for {
			instants := sched.Between(from, now, MaxPerMaterialise)
			if len(instants) == 0 {
				break
			}
			from = instants[len(instants)-1]
			more := len(instants) == MaxPerMaterialise && !sched.Next(from).After(now)
			if !more && (m.Misfire == Coalesce || m.Misfire == LatestOnly) {
				// An occurrence still owed from before (buddi stopped before its job ran)
				// is one of the instants missed: folded into this run, not run apart.
				n, err := foldWaiting(ctx, tx, m)
				if err != nil {
					return err
				}
				carried += n
			}
			plan := decide(m, instants, now, more, carried)
			w, o, err := s.insertOccurrences(ctx, tx, m, instants, plan)
			if err != nil {
				return err
			}
			written, owed, carried = written+w, owed+o, carried+len(instants)
			if !more || m.Misfire == ReplayAll {
				break
			}
		}
		if written == 0 && carried == 0 {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO core.last_materialized (mission_id, schedule_revision, instant) VALUES ($1, $2, $3)
			ON CONFLICT (mission_id) DO UPDATE SET schedule_revision = $2, instant = $3`, m.ID, m.ScheduleRevision, from)
		return err
	})
	return written, owed, err
}

// RunNowReason is the reason of an occurrence the owner asked for with "run now": it is
// never folded into a scheduled run.
const RunNowReason = "run now by the owner"

// foldWaiting marks the mission's scheduled occurrences still waiting for their run as
// skipped, folded into a later one, and returns how many instants they stood for.
func foldWaiting(ctx context.Context, tx pgx.Tx, m Mission) (int, error) {
	reason := "coalesced into a later run"
	if m.Misfire == LatestOnly {
		reason = "superseded by a later instant"
	}
	var n int
	err := tx.QueryRow(ctx, `WITH folded AS (
			UPDATE core.occurrences SET state = 'skipped', reason = $2, updated_at = now()
			WHERE mission_id = $1 AND state = 'pending' AND reason <> $3 RETURNING covers)
		SELECT COALESCE(sum(covers), 0) FROM folded`, m.ID, reason, RunNowReason).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("fold the waiting occurrences of mission %d: %w", m.ID, err)
	}
	return n, nil
}

// insertOccurrences writes instants as the plan says, in one statement, and enqueues the job
// of each owed one written (an instant materialised already is left as it is).
func (s *Store) insertOccurrences(ctx context.Context, tx pgx.Tx, m Mission, instants []time.Time, plan []verdict) (written, owed int, err error) {
	states, reasons, covers := make([]string, len(plan)), make([]string, len(plan)), make([]int32, len(plan))
	for i, p := range plan {
		states[i], reasons[i], covers[i] = p.state, p.reason, int32(p.covers)
	}
	rows, err := tx.Query(ctx, `INSERT INTO core.occurrences (mission_id, schedule_revision, instant, state, reason, covers)
		SELECT $1, $2, i, s, r, c FROM unnest($3::timestamptz[], $4::text[], $5::text[], $6::int[]) AS u(i, s, r, c)
		ON CONFLICT (mission_id, schedule_revision, instant) DO NOTHING RETURNING id, state`,
		m.ID, m.ScheduleRevision, instants, states, reasons, covers)
	if err != nil {
		return 0, 0, fmt.Errorf("materialise mission %d: %w", m.ID, err)
	}
	type row struct {
		id    int64
		state string
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var w row
		err := r.Scan(&w.id, &w.state)
		return w, err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("materialise mission %d: %w", m.ID, err)
	}
	for _, w := range got {
		if w.state != "pending" {
			continue
		}
		owed++
		if err := s.enqueue(ctx, tx, w.id); err != nil {
			return len(got), owed, err
		}
	}
	return len(got), owed, nil
}

type verdict struct {
	state, reason string
	covers        int
}

// decide applies the misfire policy to instants due (oldest first). When more is true they
// are a part of the gap and later instants follow; carried is how many instants missed before
// them (earlier parts, occurrences still waiting) the policy's one run stands for too.
//
// An instant within Grace of now is on time, but only the latest instant of a gap can be:
// coalesce and latest-only run that one alone, however many instants fell inside the grace
// (an every-minute mission has two in it).
func decide(m Mission, instants []time.Time, now time.Time, more bool, carried int) []verdict {
	out := make([]verdict, len(instants))
	latest := len(instants) - 1
	if more {
		latest = -1 // the latest instant is in a later part
	}
	for i, at := range instants {
		onTime := i == latest && now.Sub(at) <= Grace
		switch m.Misfire {
		case ReplayAll:
			out[i] = verdict{state: "pending", covers: 1}
			if !onTime {
				out[i].reason = "missed while buddi was not running; replayed"
			}
		case Coalesce:
			if i != latest {
				out[i] = verdict{state: "skipped", reason: "coalesced into a later run", covers: 1}
				continue
			}
			n := carried + len(instants)
			out[i] = verdict{state: "pending", covers: n}
			switch {
			case onTime && n > 1:
				out[i].reason = fmt.Sprintf("stands for itself and %d missed instants", n-1)
			case !onTime && n > 1:
				out[i].reason = fmt.Sprintf("stands for %d missed instants", n)
			case !onTime:
				out[i].reason = "missed while buddi was not running; run late"
			}
		case LatestOnly:
			if i != latest {
				out[i] = verdict{state: "skipped", reason: "superseded by a later instant", covers: 1}
				continue
			}
			out[i] = verdict{state: "pending", covers: 1}
			if !onTime {
				out[i].reason = "the latest missed instant; the earlier ones were skipped"
			}
		case SkipAfterDeadline:
			switch {
			case onTime:
				out[i] = verdict{state: "pending", covers: 1}
			case now.Sub(at) <= m.Deadline:
				out[i] = verdict{state: "pending", reason: "late, within its deadline", covers: 1}
			default:
				out[i] = verdict{state: "skipped", reason: "past its deadline of " + m.Deadline.String(), covers: 1}
			}
		}
	}
	return out
}
