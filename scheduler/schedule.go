// Package scheduler is missions that run on a schedule (seed 004, "Scheduling and catch-up"):
// a cron expression in an IANA time zone, occurrences materialised as rows unique on (mission,
// schedule revision, instant), so materialising is idempotent by construction, the last
// instant materialised kept apart from the last successful run, and a misfire policy that
// decides what a machine that slept through instants owes: replay-all, coalesce, latest-only
// or skip-after-deadline. River runs each occurrence (one unique job per occurrence); River's
// periodic jobs are not the record.
//
// Daylight saving time is defined on the wall clock: a schedule names wall times in its
// zone. A wall time that does not exist (inside the spring-forward gap) runs at the moment the
// clock jumps to; a wall time that happens twice (the fall-back hour) runs once, the first time.
package scheduler

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule is a parsed cron expression in a zone.
type Schedule struct {
	Expr string         // the cron expression
	Loc  *time.Location // its zone
	spec cron.Schedule
}

// Parse reads a five-field cron expression (minute hour day month weekday, or a descriptor
// such as @daily) in the IANA zone tz ("" is UTC).
func Parse(expr, tz string) (Schedule, error) {
	if tz == "" {
		tz = "UTC"
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return Schedule{}, fmt.Errorf("time zone %q is not an IANA zone (like Europe/Berlin): %w", tz, err)
	}
	spec, err := cron.ParseStandard(expr)
	if err != nil {
		return Schedule{}, fmt.Errorf("cron %q: %w (five fields: minute hour day month weekday)", expr, err)
	}
	return Schedule{Expr: expr, Loc: loc, spec: spec}, nil
}

// wall is t's wall clock in the schedule's zone, as a UTC time (a neutral clock without DST).
func (s Schedule) wall(t time.Time) time.Time {
	l := t.In(s.Loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// instant is the moment a wall time happens in the zone: in the spring gap, when the clock
// jumps to; in the fall-back hour, the first of the two.
func (s Schedule) instant(w time.Time) time.Time {
	t := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), s.Loc)
	if s.wall(t).Equal(w) {
		// A wall time that happens twice: take the earlier moment.
		if earlier := t.Add(-time.Hour); s.wall(earlier).Equal(w) {
			return earlier
		}
		return t
	}
	// Inside the gap: the first minute whose wall time is at or after w (the jump).
	start := t.Add(-3 * time.Hour).Truncate(time.Minute)
	for c := start; c.Before(t.Add(3 * time.Hour)); c = c.Add(time.Minute) {
		if !s.wall(c).Before(w) {
			return c
		}
	}
	return t
}

// Next is the first instant strictly after t.
func (s Schedule) Next(t time.Time) time.Time {
	w := s.wall(t)
	for range 1000 {
		w = s.spec.Next(w)
		if w.IsZero() {
			return time.Time{}
		}
		if at := s.instant(w); at.After(t) {
			return at
		}
	}
	return time.Time{}
}

// Between lists the instants in (after, until], at most limit of them (the latest ones are
// dropped when there are more: the caller's policy decides what is owed).
func (s Schedule) Between(after, until time.Time, limit int) []time.Time {
	var out []time.Time
	for t := s.Next(after); !t.IsZero() && !t.After(until) && len(out) < limit; t = s.Next(t) {
		out = append(out, t)
	}
	return out
}

// Cadence says the schedule in words, for previews ("every day at 02:30 (Europe/Berlin)").
func (s Schedule) Cadence(now time.Time) string {
	return fmt.Sprintf("%s (%s); next: %s", s.Words(), s.Loc, s.nextThree(now))
}

// nextThree lists the next three instants after now, in the schedule's zone, within a year.
func (s Schedule) nextThree(now time.Time) string {
	var next []string
	for _, t := range s.Between(now, now.AddDate(1, 0, 0), 3) {
		next = append(next, t.In(s.Loc).Format("Mon Jan 2 15:04"))
	}
	return strings.Join(next, ", ")
}

// Words says a five-field schedule in words where it is a common shape ("weekdays at 09:00",
// "every day at 02:30", "every hour at :15", "Mondays at 09:00", "on the 1st of each month at
// 08:00", and moreWords' "every 15 minutes", "Mondays and Thursdays at 18:00"), else the
// expression itself. FromWords reads each of these back to the same expression.
func (s Schedule) Words() string {
	f := strings.Fields(s.Expr)
	if len(f) != 5 {
		return "on the schedule " + s.Expr
	}
	minute, hour, dom, month, dow := f[0], f[1], f[2], f[3], f[4]
	m, errM := strconv.Atoi(minute)
	h, errH := strconv.Atoi(hour)
	at := fmt.Sprintf("%02d:%02d", h, m)
	days := map[string]string{"0": "Sundays", "1": "Mondays", "2": "Tuesdays", "3": "Wednesdays", "4": "Thursdays", "5": "Fridays", "6": "Saturdays", "7": "Sundays",
		"1-5": "weekdays", "0,6": "weekends", "6,0": "weekends", "*": "every day"}
	switch {
	case errM == nil && hour == "*" && dom == "*" && month == "*" && dow == "*":
		return fmt.Sprintf("every hour at :%02d", m)
	case errM == nil && errH == nil && dom == "*" && month == "*":
		if d, ok := days[dow]; ok {
			return d + " at " + at
		}
	case errM == nil && errH == nil && month == "*" && dow == "*":
		if d, err := strconv.Atoi(dom); err == nil {
			return fmt.Sprintf("on the %s of each month at %s", ordinal(d), at)
		}
	}
	if w := moreWords(minute, hour, dom, month, dow); w != "" {
		return w
	}
	return "on the schedule " + s.Expr
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}
