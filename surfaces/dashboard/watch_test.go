package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/scheduler"
	"buddi/sentinels"
	"buddi/surfaces/dashboard"
)

// watchBundle is a dashboard with the Reminders and Sentinels and alerts routes over the real
// reminders and the real sentinels' engine, on a clock stopped at Tuesday 1 December 2026,
// 10:00 in Berlin.
type watchBundle struct {
	ts     *httptest.Server
	pool   *pgxpool.Pool
	engine *sentinels.Engine
	now    time.Time
	berlin *time.Location
	watch  plugins.Sentinel // the sentinel whose findings the test sets
	mu     sync.Mutex
	found  []plugins.Finding // what watch returns on its next check
	woken  []string          // the keys of the findings that spoke
}

func serveWatch(t *testing.T) *watchBundle {
	t.Helper()
	pool := pgtest.Pool(t)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	b := &watchBundle{pool: pool, berlin: berlin, now: time.Date(2026, 12, 1, 10, 0, 0, 0, berlin)}
	clock := func() time.Time { return b.now }
	b.engine = &sentinels.Engine{Pool: pool, Now: clock, Wake: func(_ context.Context, _ string, fs []plugins.Finding) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, f := range fs {
			b.woken = append(b.woken, f.Key)
		}
		return nil
	}}
	b.watch = plugins.Sentinel{ID: "test.disks", Description: "Disks that fill up.", Period: time.Minute, Check: func(context.Context) ([]plugins.Finding, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		return append([]plugins.Finding(nil), b.found...), nil
	}}
	quiet := plugins.Sentinel{ID: "test.quiet", Description: "Something that never ticked.", Period: time.Hour,
		Check: func(context.Context) ([]plugins.Finding, error) { return nil, nil }}
	srv := dashboard.NewServer(dashboard.Deps{
		Health: func(context.Context) health.Report { return health.Report{Status: "ok"} },
		Pool:   pool, Seal: key,
		Watch: &dashboard.Watch{
			Reminders: func(ctx context.Context, all bool) ([]scheduler.Reminder, error) {
				return scheduler.Reminders(ctx, pool, "", all)
			},
			CancelReminder: func(ctx context.Context, id int64) error { return scheduler.CancelReminder(ctx, pool, id) },
			Limits:         scheduler.DefaultReminderLimits,
			Sentinels:      b.engine, List: []plugins.Sentinel{b.watch, quiet},
			Zone: func() *time.Location { return berlin }, Now: clock,
		},
	})
	b.ts = httptest.NewServer(srv.Handler())
	t.Cleanup(b.ts.Close)
	signIn(t, pool, key, b.ts.Listener.Addr().String())
	return b
}

// remind sets a reminder as an agent does: reminder.set, at a wall time in Berlin.
func (b *watchBundle) remind(t *testing.T, agent, at, note string) {
	t.Helper()
	tool := scheduler.ReminderManifestIn(b.pool, scheduler.DefaultReminderLimits, "Europe/Berlin").Tools[0]
	args, _ := json.Marshal(map[string]string{"at": at, "note": note})
	res, err := tool.Execute(context.Background(), plugins.Call{Tool: "reminder.set", Agent: agent, Args: args, Now: b.now}, nil)
	if err != nil || res.IsError {
		t.Fatalf("reminder.set %s: %v %s", at, err, res.Text)
	}
}

// tick runs the test sentinel once over found, and returns the keys that spoke.
func (b *watchBundle) tick(t *testing.T, found ...plugins.Finding) []string {
	t.Helper()
	b.mu.Lock()
	b.found, b.woken = found, nil
	b.mu.Unlock()
	if _, err := b.engine.Tick(context.Background(), b.watch); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.woken
}

func (b *watchBundle) get(t *testing.T, path string) map[string]any {
	t.Helper()
	code, out := do(t, "GET", b.ts.URL+path, nil, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, code, out)
	}
	return out
}

func (b *watchBundle) post(t *testing.T, path string, body any, want int) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(body)
	code, out := do(t, "POST", b.ts.URL+path, jsonType, string(raw))
	if code != want {
		t.Fatalf("POST %s %s: %d, want %d: %v", path, raw, code, want, out)
	}
	return out
}

// Reminders: pending ones first, soonest first, with when each fires in the owner's words
// and zone; cancel one (then it is listed below as cancelled); a reminder that is not pending,
// that does not exist, or an id that is no number is refused with a sentence.
func TestRemindersPage(t *testing.T) {
	b := serveWatch(t)
	b.remind(t, "helper", "2026-12-02T09:00:00", "Check the build passed.")
	b.remind(t, "maker", "2026-12-01T15:30:00", "Pay the card before midnight.")
	b.remind(t, "helper", "2026-12-04T08:00:00", "Ask about the parcel.")

	out := b.get(t, "/api/reminders")
	if out["zone"] != "Europe/Berlin" || out["pending"] != 3.0 {
		t.Fatalf("reminders: %v", out)
	}
	if l := out["limits"].(map[string]any); l["per_agent"] != 20.0 || l["horizon"] != "90 days" || l["grace"] != "1 hour" {
		t.Fatalf("limits: %v", l)
	}
	list := out["reminders"].([]any)
	var got []string
	for _, r := range list {
		m := r.(map[string]any)
		got = append(got, fmt.Sprintf("%s|%s|%s|%s", m["agent"], m["state"], m["note"], m["fires"]))
	}
	want := []string{
		"maker|pending|Pay the card before midnight.|Fires today at 15:30, in 6 hours.",
		"helper|pending|Check the build passed.|Fires tomorrow at 09:00, in 23 hours.",
		"helper|pending|Ask about the parcel.|Fires on Friday at 08:00, in 3 days.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("reminders:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if list[1].(map[string]any)["when"] != "tomorrow at 09:00" {
		t.Fatalf("when: %v", list[1])
	}

	id := int64(list[1].(map[string]any)["id"].(float64))
	if out := b.post(t, fmt.Sprintf("/api/reminders/%d/cancel", id), nil, http.StatusOK); out["state"] != "cancelled" {
		t.Fatalf("cancel: %v", out)
	}
	var state string
	if err := b.pool.QueryRow(context.Background(), `SELECT state FROM core.reminders WHERE id = $1`, id).Scan(&state); err != nil || state != "cancelled" {
		t.Fatalf("the cancelled reminder is %q (%v)", state, err)
	}
	out = b.get(t, "/api/reminders")
	list = out["reminders"].([]any)
	last := list[len(list)-1].(map[string]any)
	if out["pending"] != 2.0 || len(list) != 3 || last["state"] != "cancelled" || last["fires"] != "Cancelled; it was due tomorrow at 09:00." {
		t.Fatalf("after cancelling: %v", out)
	}

	if out := b.post(t, fmt.Sprintf("/api/reminders/%d/cancel", id), nil, http.StatusNotFound); !strings.Contains(fmt.Sprint(out["error"]), "no pending reminder") {
		t.Fatalf("cancelling twice: %v", out)
	}
	b.post(t, "/api/reminders/999999/cancel", nil, http.StatusNotFound)
	if out := b.post(t, "/api/reminders/soon/cancel", nil, http.StatusBadRequest); !strings.Contains(fmt.Sprint(out["error"]), "positive number") {
		t.Fatalf("a bad id: %v", out)
	}
}

// An empty list is a list, not null.
func TestRemindersPageEmpty(t *testing.T) {
	b := serveWatch(t)
	out := b.get(t, "/api/reminders")
	if list, ok := out["reminders"].([]any); !ok || len(list) != 0 || out["pending"] != 0.0 {
		t.Fatalf("no reminders: %v", out)
	}
	s := b.get(t, "/api/sentinels")
	if s["open"] != 0.0 || fmt.Sprint(s["mutes"]) != "[]" || len(s["sentinels"].([]any)) != 2 {
		t.Fatalf("no findings: %v", s)
	}
}

// sentinelOf is /api/sentinels's entry for id.
func (b *watchBundle) sentinelOf(t *testing.T, id string) map[string]any {
	t.Helper()
	for _, s := range b.get(t, "/api/sentinels")["sentinels"].([]any) {
		if m := s.(map[string]any); m["id"] == id {
			return m
		}
	}
	t.Fatalf("no sentinel %s listed", id)
	return nil
}

// findingOf is the test sentinel's open finding key, or nil.
func (b *watchBundle) findingOf(t *testing.T, key string) map[string]any {
	t.Helper()
	for _, f := range b.sentinelOf(t, "test.disks")["findings"].([]any) {
		if m := f.(map[string]any); m["key"] == key {
			return m
		}
	}
	return nil
}

// Sentinels and alerts: each sentinel with its state, last check and open findings; switch
// one off and on; snooze a finding for a week or as not needed (it then stays silent past its
// cooldown); mute a kind's subject (silent for good, listed, and unmuted again); every bad
// request is refused with a sentence.
func TestSentinelsPage(t *testing.T) {
	b := serveWatch(t)
	disk := plugins.Finding{Key: "disk:/", Severity: "urgent", OwnerLine: "The disk / is 97% full.", Kind: "disk", Subject: "/"}
	home := plugins.Finding{Key: "disk:/home", Severity: "info", OwnerLine: "The disk /home is 85% full.", Kind: "disk", Subject: "/home"}
	if spoke := b.tick(t, disk, home); len(spoke) != 1 {
		t.Fatalf("the first tick woke %v", spoke)
	}

	s := b.sentinelOf(t, "test.disks")
	if s["state"] != "on" || s["enabled"] != true || s["last_check"] != "today at 10:00" || s["open_findings"] != 2.0 || s["description"] != "Disks that fill up." {
		t.Fatalf("the sentinel: %v", s)
	}
	fs := s["findings"].([]any)
	if len(fs) != 2 || fs[0].(map[string]any)["key"] != "disk:/" || fs[0].(map[string]any)["owner_line"] != "The disk / is 97% full." ||
		fs[0].(map[string]any)["silenced"] != "" || fs[0].(map[string]any)["seen"] != "today at 10:00" {
		t.Fatalf("the findings, urgent first: %v", fs)
	}
	if q := b.sentinelOf(t, "test.quiet"); q["state"] != "on" || q["last_check"] != "never" || len(q["findings"].([]any)) != 0 {
		t.Fatalf("a sentinel that never ticked: %v", q)
	}
	if out := b.get(t, "/api/sentinels"); out["open"] != 2.0 {
		t.Fatalf("open: %v", out["open"])
	}

	// Off and on again.
	b.post(t, "/api/sentinels/test.disks/off", nil, http.StatusOK)
	if s := b.sentinelOf(t, "test.disks"); s["state"] != "off" || s["enabled"] != false {
		t.Fatalf("switched off: %v", s)
	}
	if due, _, err := b.engine.Due(context.Background(), b.watch); err != nil || due {
		t.Fatalf("a switched-off sentinel is due: %v %v", due, err)
	}
	b.post(t, "/api/sentinels/test.disks/on", nil, http.StatusOK)
	if s := b.sentinelOf(t, "test.disks"); s["state"] != "on" {
		t.Fatalf("switched on: %v", s)
	}
	if out := b.post(t, "/api/sentinels/test.nothing/off", nil, http.StatusNotFound); !strings.Contains(fmt.Sprint(out["error"]), "no sentinel test.nothing") {
		t.Fatalf("switching an unknown sentinel: %v", out)
	}

	// Not now: a week.
	out := b.post(t, "/api/sentinels/test.disks/snooze", map[string]string{"key": "disk:/", "snooze": "not-now"}, http.StatusOK)
	if out["sentence"] != "Snoozed until Tue 8 Dec at 10:00." {
		t.Fatalf("not now: %v", out)
	}
	if f := b.findingOf(t, "disk:/"); f["silenced"] != "Snoozed until Tue 8 Dec at 10:00." || f["snoozed_until"] == nil {
		t.Fatalf("the snoozed finding: %v", f)
	}
	// Not needed: until it resolves.
	out = b.post(t, "/api/sentinels/test.disks/snooze", map[string]string{"key": "disk:/home", "snooze": "not-needed"}, http.StatusOK)
	if out["sentence"] != "Not needed: silent until it resolves." {
		t.Fatalf("not needed: %v", out)
	}
	if f := b.findingOf(t, "disk:/home"); f["silenced"] != "Not needed: silent until it resolves." || f["not_needed"] != true {
		t.Fatalf("the finding not needed: %v", f)
	}
	b.now = b.now.Add(sentinels.UrgentCooldown + time.Hour)
	if spoke := b.tick(t, disk, home); len(spoke) != 0 {
		t.Fatalf("snoozed findings spoke past their cooldown: %v", spoke)
	}

	for _, bad := range []struct {
		body map[string]string
		want int
		says string
	}{
		{map[string]string{"key": "disk:/", "snooze": "forever"}, http.StatusBadRequest, "not-now"},
		{map[string]string{"snooze": "not-now"}, http.StatusBadRequest, "its key"},
		{map[string]string{"key": "disk:/var", "snooze": "not-now"}, http.StatusNotFound, "no open finding disk:/var"},
	} {
		if out := b.post(t, "/api/sentinels/test.disks/snooze", bad.body, bad.want); !strings.Contains(fmt.Sprint(out["error"]), bad.says) {
			t.Errorf("snooze %v: %v", bad.body, out)
		}
	}
	b.post(t, "/api/sentinels/test.nothing/snooze", map[string]string{"key": "disk:/", "snooze": "not-now"}, http.StatusNotFound)
	if code, out := do(t, "POST", b.ts.URL+"/api/sentinels/test.disks/snooze", jsonType, `{"key":"disk:/","until":"never"}`); code != http.StatusBadRequest {
		t.Fatalf("an unknown field: %d %v", code, out)
	}

	// Mute one subject of a kind: listed, the finding shows it, and it never speaks again.
	out = b.post(t, "/api/mutes", map[string]string{"kind": "disk", "subject": "/"}, http.StatusOK)
	if out["sentence"] != "Muted disk for /: still recorded here, never told." {
		t.Fatalf("mute: %v", out)
	}
	if f := b.findingOf(t, "disk:/"); f["muted"] != true || f["silenced"] != "Muted: recorded here, never told." {
		t.Fatalf("the muted finding: %v", f)
	}
	if f := b.findingOf(t, "disk:/home"); f["muted"] != false {
		t.Fatalf("a mute of / muted /home: %v", f)
	}
	mutes := b.get(t, "/api/sentinels")["mutes"].([]any)
	if len(mutes) != 1 || mutes[0].(map[string]any)["kind"] != "disk" || mutes[0].(map[string]any)["subject"] != "/" {
		t.Fatalf("mutes: %v", mutes)
	}
	b.tick(t, home) // "/" resolves, and comes back muted: it would speak at once otherwise.
	b.now = b.now.Add(8 * 24 * time.Hour)
	if spoke := b.tick(t, disk); len(spoke) != 0 {
		t.Fatalf("a muted finding spoke: %v", spoke)
	}
	if out := b.post(t, "/api/mutes", map[string]string{"subject": "/"}, http.StatusBadRequest); !strings.Contains(fmt.Sprint(out["error"]), "which kind") {
		t.Fatalf("a mute without a kind: %v", out)
	}

	// Unmute: it speaks again when it comes back.
	mid := int64(mutes[0].(map[string]any)["id"].(float64))
	b.post(t, fmt.Sprintf("/api/mutes/%d/unmute", mid), nil, http.StatusOK)
	b.post(t, fmt.Sprintf("/api/mutes/%d/unmute", mid), nil, http.StatusNotFound)
	b.post(t, "/api/mutes/all/unmute", nil, http.StatusBadRequest)
	b.tick(t)
	if spoke := b.tick(t, disk); len(spoke) != 1 {
		t.Fatalf("after unmuting, the finding that came back stayed quiet: %v", spoke)
	}
}

// A sentinel whose last check failed says so; findings of a sentinel no longer compiled in
// are still listed, under it.
func TestSentinelsPageFailingAndRemoved(t *testing.T) {
	b := serveWatch(t)
	ctx := context.Background()
	if _, err := b.pool.Exec(ctx, `INSERT INTO core.sentinel_runs (sentinel, started_at, finished_at, error) VALUES ('test.disks', $1, $1, 'the disk could not be read')`, b.now.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	old := &sentinels.Engine{Pool: b.pool, Now: func() time.Time { return b.now }}
	gone := plugins.Sentinel{ID: "test.gone", Period: time.Minute, Check: func(context.Context) ([]plugins.Finding, error) {
		return []plugins.Finding{{Key: "k", Severity: "info", OwnerLine: "Left behind."}}, nil
	}}
	if _, err := old.Tick(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if s := b.sentinelOf(t, "test.disks"); s["state"] != "failing" || s["last_error"] != "the disk could not be read" || s["last_check"] != "today at 08:00" {
		t.Fatalf("a failing sentinel: %v", s)
	}
	s := b.sentinelOf(t, "test.gone")
	if s["state"] != "removed" || len(s["findings"].([]any)) != 1 || s["open_findings"] != 1.0 {
		t.Fatalf("a removed sentinel's finding: %v", s)
	}
	b.post(t, "/api/sentinels/test.gone/off", nil, http.StatusNotFound)
}

// Every write route of the two pages checks the CSRF token like the others.
func TestWatchWritesCheckCSRF(t *testing.T) {
	b := serveWatch(t)
	for _, path := range []string{"/api/reminders/1/cancel", "/api/sentinels/test.disks/on", "/api/sentinels/test.disks/off",
		"/api/sentinels/test.disks/snooze", "/api/mutes", "/api/mutes/1/unmute"} {
		if code, _ := do(t, "POST", b.ts.URL+path, map[string]string{dashboard.CSRFHeader: "", "Content-Type": "application/json"}, `{}`); code != http.StatusForbidden {
			t.Errorf("POST %s without the CSRF header: %d", path, code)
		}
	}
}
