package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"buddi/plugins"
	"buddi/scheduler"
	"buddi/sentinels"
)

// Watch serves the Reminders and Sentinels and alerts pages.
type Watch struct {
	// Reminders lists the reminders: the pending ones, or every one with all
	// (scheduler.Reminders over the pool).
	Reminders func(ctx context.Context, all bool) ([]scheduler.Reminder, error)
	// CancelReminder cancels a pending reminder; an error wrapping scheduler.ErrNotFound
	// when no pending reminder has that id (scheduler.CancelReminder).
	CancelReminder func(ctx context.Context, id int64) error
	// Limits are the reminders' limits (BUDDI_REMINDER_*), shown under the list.
	Limits scheduler.ReminderLimits
	// Sentinels is the sentinels' engine (*sentinels.Engine).
	Sentinels Sentinels
	// List is every sentinel compiled in: the ones the page shows and may switch.
	List []plugins.Sentinel
	// Zone is the owner's time zone, the one times are told in, read at each request (a zone
	// saved while buddi runs is used from then on); nil is UTC.
	Zone func() *time.Location
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Sentinels is the sentinels' engine as the Sentinels and alerts page uses it
// (*sentinels.Engine).
type Sentinels interface {
	// Statuses reports on each sentinel of list.
	Statuses(ctx context.Context, list []plugins.Sentinel) ([]sentinels.Status, error)
	// OpenFindings lists the findings not resolved, urgent first.
	OpenFindings(ctx context.Context) ([]sentinels.Finding, error)
	// Open returns one finding not resolved, or an error wrapping sentinels.ErrNoFinding.
	Open(ctx context.Context, sentinel, key string) (sentinels.Finding, error)
	// Snooze silences a finding for a week, or until it resolves with notNeeded.
	Snooze(ctx context.Context, sentinel, key string, notNeeded bool) error
	// Mute stops a kind of finding (or one subject of it) from ever speaking.
	Mute(ctx context.Context, kind, subject string) error
	// Mutes lists the mutes.
	Mutes(ctx context.Context) ([]sentinels.Mute, error)
	// Unmute removes a mute, or returns an error wrapping sentinels.ErrNoFinding.
	Unmute(ctx context.Context, id int64) error
	// Switch turns a sentinel on or off.
	Switch(ctx context.Context, sentinel string, on bool) error
}

var _ Sentinels = (*sentinels.Engine)(nil)

// SnoozeWeek is how long "Not now" silences a finding (sentinels.Engine.Snooze).
const SnoozeWeek = 7 * 24 * time.Hour

// historyShown is how many fired, expired and cancelled reminders the page lists under the
// pending ones.
const historyShown = 30

// watchRoutes registers the Reminders and Sentinels and alerts routes when Deps.Watch is set.
func (s *Server) watchRoutes() {
	wt := s.deps.Watch
	if wt == nil {
		return
	}
	if wt.Reminders != nil && wt.CancelReminder != nil {
		s.handle("GET /api/reminders", s.listReminders)
		s.write("POST /api/reminders/{id}/cancel", s.cancelReminder)
	}
	if wt.Sentinels != nil {
		s.handle("GET /api/sentinels", s.listSentinels)
		s.write("POST /api/sentinels/{id}/on", s.switchSentinel(true))
		s.write("POST /api/sentinels/{id}/off", s.switchSentinel(false))
		s.write("POST /api/sentinels/{id}/snooze", s.snoozeFinding)
		s.write("POST /api/mutes", s.mute)
		s.write("POST /api/mutes/{id}/unmute", s.unmute)
	}
}

func (wt *Watch) now() time.Time {
	if wt.Now == nil {
		return time.Now()
	}
	return wt.Now()
}

func (wt *Watch) zone() *time.Location {
	if wt.Zone == nil {
		return time.UTC
	}
	if loc := wt.Zone(); loc != nil {
		return loc
	}
	return time.UTC
}

// reminderJSON is a reminder as the page shows it: when it fires in the owner's words.
type reminderJSON struct {
	scheduler.Reminder
	AgentHandle string `json:"agent_handle,omitempty"` // the agent's @handle, when it still exists
	When        string `json:"when"`                   // "tomorrow at 09:00", in the owner's zone
	Fires       string `json:"fires"`                  // one sentence: when it fires, or what became of it
}

// listReminders lists the pending reminders, soonest first, then the latest of the others.
func (s *Server) listReminders(w http.ResponseWriter, r *http.Request) {
	wt := s.deps.Watch
	ctx := r.Context()
	pending, err := wt.Reminders(ctx, false)
	if err != nil {
		s.failed(w, r, "the reminders could not be read", err)
		return
	}
	every, err := wt.Reminders(ctx, true)
	if err != nil {
		s.failed(w, r, "the reminders could not be read", err)
		return
	}
	slices.SortStableFunc(pending, func(a, b scheduler.Reminder) int { return a.DueAt.Compare(b.DueAt) })
	var done []scheduler.Reminder
	for _, m := range every {
		if m.State != "pending" && len(done) < historyShown {
			done = append(done, m)
		}
	}
	handles := s.handles()
	now, loc := wt.now(), wt.zone()
	out := []reminderJSON{}
	for _, m := range append(pending, done...) {
		out = append(out, reminderJSON{Reminder: m, AgentHandle: handles[m.Agent], When: inWords(now, m.DueAt, loc), Fires: fires(now, m, loc)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"reminders": out, "pending": len(pending), "limits": limitsJSON(wt.Limits), "zone": loc.String()})
}

// limitsJSON are the reminders' limits with their durations in words.
func limitsJSON(l scheduler.ReminderLimits) map[string]any {
	return map[string]any{"per_agent": l.PerAgent, "total": l.Total, "min_lead": span(l.MinLead), "horizon": span(l.Horizon), "grace": span(l.Grace)}
}

// handles maps agent ids to their @handles, when the agents load.
func (s *Server) handles() map[string]string {
	out := map[string]string{}
	if s.deps.Chat == nil || s.deps.Chat.Catalog == nil {
		return out
	}
	cat, err := s.deps.Chat.Catalog()
	if err != nil {
		return out
	}
	for _, a := range cat.All() {
		out[a.ID] = a.Handle
	}
	return out
}

// fires says in one sentence when reminder m fires, or what became of it.
func fires(now time.Time, m scheduler.Reminder, loc *time.Location) string {
	at := inWords(now, m.DueAt, loc)
	switch m.State {
	case "pending":
		if m.DueAt.After(now) {
			return fmt.Sprintf("Fires %s, in %s.", at, span(m.DueAt.Sub(now)))
		}
		return fmt.Sprintf("Due %s: it fires within the minute.", at)
	case "fired":
		return fmt.Sprintf("Fired %s.", at)
	case "expired":
		return fmt.Sprintf("Expired: it was due %s and buddi was not running in time to fire it.", at)
	case "cancelled":
		return fmt.Sprintf("Cancelled; it was due %s.", at)
	}
	return fmt.Sprintf("%s; due %s.", m.State, at)
}

// inWords tells t as the owner would say it from now, in loc: "today at 15:04", "tomorrow
// at 09:00", "on Friday at 08:30", "on Mon 8 Dec at 09:00".
func inWords(now, t time.Time, loc *time.Location) string {
	now, t = now.In(loc), t.In(loc)
	day := func(x time.Time) int {
		y, m, d := x.Date()
		return int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
	}
	clock := t.Format("15:04")
	switch days := day(t) - day(now); {
	case days == 0:
		return "today at " + clock
	case days == 1:
		return "tomorrow at " + clock
	case days == -1:
		return "yesterday at " + clock
	case days > 1 && days < 7:
		return "on " + t.Weekday().String() + " at " + clock
	case t.Year() == now.Year():
		return "on " + t.Format("Mon 2 Jan") + " at " + clock
	default:
		return "on " + t.Format("Mon 2 Jan 2006") + " at " + clock
	}
}

// until is inWords after "until": "tomorrow at 09:00", "Tue 8 Dec at 10:00".
func until(now, t time.Time, loc *time.Location) string {
	return strings.TrimPrefix(inWords(now, t, loc), "on ")
}

// span says a duration as the owner would: "40 minutes", "3 hours", "5 days".
func span(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	plural := func(n int64, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return strconv.FormatInt(n, 10) + " " + unit + "s"
	}
	minutes := int64((d + 30*time.Second) / time.Minute)
	switch {
	case minutes < 1:
		return "less than a minute"
	case minutes < 60 || minutes < 120 && minutes%60 != 0:
		return plural(minutes, "minute")
	case d < 36*time.Hour:
		return plural(int64((d+30*time.Minute)/time.Hour), "hour")
	default:
		return plural(int64((d+12*time.Hour)/(24*time.Hour)), "day")
	}
}

// pathNumber reads the {id} of a reminder or mute route; it answers 400 and returns false for
// one that is not a positive number.
func pathNumber(w http.ResponseWriter, r *http.Request, what string) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("a %s's id is a positive number, not %q", what, r.PathValue("id")))
		return 0, false
	}
	return id, true
}

func (s *Server) cancelReminder(w http.ResponseWriter, r *http.Request) {
	id, ok := pathNumber(w, r, "reminder")
	if !ok {
		return
	}
	err := s.deps.Watch.CancelReminder(r.Context(), id)
	switch {
	case errors.Is(err, scheduler.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("there is no pending reminder %d: it fired, expired or was cancelled already", id))
	case err != nil:
		s.failed(w, r, fmt.Sprintf("reminder %d could not be cancelled", id), err)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "state": "cancelled"})
	}
}

// sentinelJSON is a sentinel as the page shows it, with its open findings.
type sentinelJSON struct {
	sentinels.Status
	State     string        `json:"state"`      // on, off, failing (its last check failed) or removed (no longer compiled in)
	LastCheck string        `json:"last_check"` // its last check in the owner's words, or "never"
	List      []findingJSON `json:"findings"`   // its open findings, urgent first
}

// findingJSON is an open finding as the page shows it.
type findingJSON struct {
	sentinels.Finding
	Muted    bool   `json:"muted"`    // a mute covers its kind or subject
	Silenced string `json:"silenced"` // why it does not speak, in a sentence; "" when it may
	Seen     string `json:"seen"`     // when it was last seen, in the owner's words
}

// listSentinels lists the sentinels with their open findings, and the mutes.
func (s *Server) listSentinels(w http.ResponseWriter, r *http.Request) {
	wt := s.deps.Watch
	ctx := r.Context()
	sts, err := wt.Sentinels.Statuses(ctx, wt.List)
	if err != nil {
		s.failed(w, r, "the sentinels could not be read", err)
		return
	}
	fs, err := wt.Sentinels.OpenFindings(ctx)
	if err != nil {
		s.failed(w, r, "the findings could not be read", err)
		return
	}
	mutes, err := wt.Sentinels.Mutes(ctx)
	if err != nil {
		s.failed(w, r, "the mutes could not be read", err)
		return
	}
	if mutes == nil {
		mutes = []sentinels.Mute{}
	}
	now, loc := wt.now(), wt.zone()
	out := make([]sentinelJSON, 0, len(sts))
	at := map[string]int{}
	for _, st := range sts {
		j := sentinelJSON{Status: st, State: "on", LastCheck: "never", List: []findingJSON{}}
		if st.LastRun != nil {
			j.LastCheck = inWords(now, *st.LastRun, loc)
		}
		switch {
		case !st.Enabled:
			j.State = "off"
		case st.LastError != "":
			j.State = "failing"
		}
		at[st.ID] = len(out)
		out = append(out, j)
	}
	for _, f := range fs {
		i, ok := at[f.Sentinel]
		if !ok {
			i = len(out)
			at[f.Sentinel] = i
			out = append(out, sentinelJSON{Status: sentinels.Status{ID: f.Sentinel, Description: "A sentinel that is no longer part of buddi."},
				State: "removed", LastCheck: "never", List: []findingJSON{}})
		}
		out[i].List = append(out[i].List, finding(now, loc, f, mutes))
		out[i].Findings = len(out[i].List)
	}
	open := 0
	for _, j := range out {
		open += len(j.List)
	}
	writeJSON(w, http.StatusOK, map[string]any{"sentinels": out, "open": open, "mutes": mutes, "zone": loc.String()})
}

// finding is f as the page shows it, with why it is silent.
func finding(now time.Time, loc *time.Location, f sentinels.Finding, mutes []sentinels.Mute) findingJSON {
	j := findingJSON{Finding: f, Seen: inWords(now, f.LastSeen, loc)}
	j.Muted = f.Kind != "" && slices.ContainsFunc(mutes, func(m sentinels.Mute) bool {
		return m.Kind == f.Kind && (m.Subject == "" || m.Subject == f.Subject)
	})
	switch {
	case j.Muted:
		j.Silenced = "Muted: recorded here, never told."
	case f.NotNeeded:
		j.Silenced = "Not needed: silent until it resolves."
	case f.Snoozed != nil && f.Snoozed.After(now):
		j.Silenced = fmt.Sprintf("Snoozed until %s.", until(now, *f.Snoozed, loc))
	}
	return j
}

// known reports whether id is a sentinel of the list.
func (wt *Watch) known(id string) bool {
	return slices.ContainsFunc(wt.List, func(s plugins.Sentinel) bool { return s.ID == id })
}

func (s *Server) switchSentinel(on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if !s.deps.Watch.known(id) {
			writeError(w, http.StatusNotFound, fmt.Sprintf("there is no sentinel %s", id))
			return
		}
		if err := s.deps.Watch.Sentinels.Switch(r.Context(), id, on); err != nil {
			s.failed(w, r, fmt.Sprintf("%s could not be switched", id), err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "enabled": on})
	}
}

// snoozeBody is a snooze: the finding's key, and "not-now" (a week) or "not-needed" (until
// it resolves), the two the command line offers.
type snoozeBody struct {
	Key    string `json:"key"`
	Snooze string `json:"snooze"`
}

func (s *Server) snoozeFinding(w http.ResponseWriter, r *http.Request) {
	var b snoozeBody
	if !decodeBody(w, r, &b) {
		return
	}
	wt, id := s.deps.Watch, r.PathValue("id")
	if b.Key == "" {
		writeError(w, http.StatusBadRequest, "say which finding to snooze: its key")
		return
	}
	if b.Snooze != "not-now" && b.Snooze != "not-needed" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("a snooze is not-now (a week) or not-needed (until it resolves), not %q", b.Snooze))
		return
	}
	ctx := r.Context()
	if _, err := wt.Sentinels.Open(ctx, id, b.Key); errors.Is(err, sentinels.ErrNoFinding) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("%s has no open finding %s", id, b.Key))
		return
	} else if err != nil {
		s.failed(w, r, "the finding could not be read", err)
		return
	}
	notNeeded := b.Snooze == "not-needed"
	if err := wt.Sentinels.Snooze(ctx, id, b.Key, notNeeded); err != nil {
		s.failed(w, r, "the finding could not be snoozed", err)
		return
	}
	sentence := "Not needed: silent until it resolves."
	if !notNeeded {
		now := wt.now()
		sentence = fmt.Sprintf("Snoozed until %s.", until(now, now.Add(SnoozeWeek), wt.zone()))
	}
	writeJSON(w, http.StatusOK, map[string]any{"sentinel": id, "key": b.Key, "snooze": b.Snooze, "sentence": sentence})
}

// muteBody is a mute: a kind of finding, and optionally one subject of it.
type muteBody struct {
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
}

func (s *Server) mute(w http.ResponseWriter, r *http.Request) {
	var b muteBody
	if !decodeBody(w, r, &b) {
		return
	}
	kind, subject := strings.TrimSpace(b.Kind), strings.TrimSpace(b.Subject)
	if kind == "" || len(kind) > 200 || len(subject) > 500 {
		writeError(w, http.StatusBadRequest, "say which kind of finding to mute (at most 200 characters), and optionally one subject of it")
		return
	}
	if err := s.deps.Watch.Sentinels.Mute(r.Context(), kind, subject); err != nil {
		s.failed(w, r, "the mute could not be stored", err)
		return
	}
	what := kind
	if subject != "" {
		what = kind + " for " + subject
	}
	writeJSON(w, http.StatusOK, map[string]any{"kind": kind, "subject": subject, "sentence": fmt.Sprintf("Muted %s: still recorded here, never told.", what)})
}

func (s *Server) unmute(w http.ResponseWriter, r *http.Request) {
	id, ok := pathNumber(w, r, "mute")
	if !ok {
		return
	}
	err := s.deps.Watch.Sentinels.Unmute(r.Context(), id)
	switch {
	case errors.Is(err, sentinels.ErrNoFinding):
		writeError(w, http.StatusNotFound, fmt.Sprintf("there is no mute %d", id))
	case err != nil:
		s.failed(w, r, fmt.Sprintf("mute %d could not be removed", id), err)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "unmuted": true})
	}
}
