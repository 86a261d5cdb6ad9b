package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/plugins"
	"buddi/scheduler"
	"buddi/sentinels"
)

// The Reminders and Sentinels and alerts pages in a real browser, on a running buddi serve:
// both empty first (each says what would appear and how); then two reminders set as an
// agent's reminder.set sets them and two findings of the developer's failing-tests sentinel
// recorded by the sentinels' engine. Reminders lists them with when they fire, and one is
// cancelled from the page; on Sentinels and alerts one finding is snoozed (Not now), the
// other muted after its confirmation, the mute taken back, and the sentinel switched off and
// on. Each page at 1280 and 390 px, with screenshots in the test's artifact directory.
func TestWatchPagesInBrowser(t *testing.T) {
	home, port, vars := env(t, "BUDDI_VAULT_KEY=aGVsbG8taGVsbG8taGVsbG8taGVsbG8taGVsbG8tISE=")
	if code, out, errOut := runBuddi(t, vars, 2*time.Minute, "db", "migrate"); code != 0 {
		t.Fatalf("db migrate: %d %s%s", code, out, errOut)
	}
	s := startServe(t, home, port, vars)
	s.health()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, appDSN(t, home))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	var link struct{ URL string }
	if code, out, errOut := runBuddi(t, vars, time.Minute, "dashboard", "--json"); code != 0 || json.Unmarshal([]byte(out), &link) != nil {
		t.Fatalf("buddi dashboard: %d %s%s", code, out, errOut)
	}
	p := openPage(t, s)
	p.width(1280)
	p.navigate(link.URL)
	p.poll("the dashboard", `!!document.querySelector('header nav a[data-page=reminders]')`)

	// Empty: each page says what would appear there and how it gets there.
	p.goTo("#/reminders")
	p.poll("no reminders", `(document.querySelector('main .card.empty') || {innerText: ''}).innerText.includes('An agent sets a reminder')`)
	p.shootBoth("reminders-empty")
	p.goTo("#/alerts")
	p.poll("nothing open", `(document.querySelector('main .card.empty') || {innerText: ''}).innerText.includes('Nothing open') && !!document.querySelector('main [data-sentinel="developer.failing-tests"]')`)
	p.shootBoth("alerts-empty")

	// Two reminders, set as the agent's tool sets them.
	tool := scheduler.ReminderManifest(pool, scheduler.DefaultReminderLimits).Tools[0]
	for _, r := range []struct {
		in   time.Duration
		note string
	}{{2 * time.Hour, "Check that the nightly build passed."}, {26 * time.Hour, "Ask whether the parcel arrived."}} {
		args, _ := json.Marshal(map[string]string{"at": time.Now().Add(r.in).Format(time.RFC3339), "note": r.note})
		res, err := tool.Execute(ctx, plugins.Call{Tool: "reminder.set", Agent: "developer", Args: args, Now: time.Now()}, nil)
		if err != nil || res.IsError {
			t.Fatalf("reminder.set: %v %s", err, res.Text)
		}
	}
	var soon, later int64
	if err := pool.QueryRow(ctx, `SELECT min(id), max(id) FROM core.reminders`).Scan(&soon, &later); err != nil {
		t.Fatal(err)
	}

	// Two findings of the failing-tests sentinel, recorded by the engine as its tick records
	// them, once serve's own first tick is in the ledger (the next is five minutes away).
	waitFor(t, "serve's first failing-tests tick", time.Minute, func() bool {
		var n int
		return pool.QueryRow(ctx, `SELECT count(*) FROM core.sentinel_runs WHERE sentinel = 'developer.failing-tests' AND finished_at IS NOT NULL`).Scan(&n) == nil && n > 0
	})
	failing := plugins.Sentinel{ID: "developer.failing-tests", Period: 5 * time.Minute, Check: func(context.Context) ([]plugins.Finding, error) {
		return []plugins.Finding{
			{Key: "failing-tests:developer", Severity: "info", Kind: "failing-tests", Subject: "developer", OwnerLine: "3 failing tests in developer's workspace (/srv/shop)."},
			{Key: "failing-tests:concierge", Severity: "info", Kind: "failing-tests", Subject: "concierge", OwnerLine: "1 failing test in concierge's workspace (/srv/notes)."},
		}, nil
	}}
	if _, err := (&sentinels.Engine{Pool: pool}).Tick(ctx, failing); err != nil {
		t.Fatal(err)
	}

	// Reminders: both, soonest first, in words; cancel the soonest from the page.
	p.goTo("#/home")
	p.goTo("#/reminders")
	p.poll("the reminders", `document.querySelectorAll('main [data-reminder] button.cancel').length === 2`)
	if got := p.eval(`[...document.querySelectorAll('main [data-reminder]')].map(e => e.dataset.reminder + ' ' + e.querySelector('.note').textContent).join('\n')`); !strings.HasPrefix(got, strconv.FormatInt(soon, 10)+" Check that the nightly build passed.\n"+strconv.FormatInt(later, 10)+" Ask whether") {
		t.Fatalf("the reminders, soonest first:\n%s", got)
	}
	if got := p.eval(`document.querySelector('main [data-reminder]').innerText`); !strings.Contains(got, "Fires today at") && !strings.Contains(got, "Fires tomorrow at") || !strings.Contains(got, "in 2 hours") {
		t.Fatalf("when the first fires: %s", got)
	}
	p.shootBoth("reminders")
	p.click(`main [data-reminder="` + strconv.FormatInt(soon, 10) + `"] button.cancel`)
	p.poll("the cancelled reminder", `(() => { const c = document.querySelector('main [data-reminder="`+strconv.FormatInt(soon, 10)+`"]'); return !!c && c.classList.contains('cancelled') && !c.querySelector('button.cancel') && c.innerText.includes('Cancelled; it was due') })()`)
	var state string
	if err := pool.QueryRow(ctx, `SELECT state FROM core.reminders WHERE id = $1`, soon).Scan(&state); err != nil || state != "cancelled" {
		t.Fatalf("the reminder cancelled from the page is %q (%v)", state, err)
	}
	if err := pool.QueryRow(ctx, `SELECT state FROM core.reminders WHERE id = $1`, later).Scan(&state); err != nil || state != "pending" {
		t.Fatalf("the other reminder is %q (%v)", state, err)
	}

	// Sentinels and alerts: the sentinel and its two findings.
	const sentinel = `main [data-sentinel="developer.failing-tests"]`
	const mine, theirs = sentinel + ` [data-finding="failing-tests:developer"]`, sentinel + ` [data-finding="failing-tests:concierge"]`
	p.goTo("#/alerts")
	p.poll("the findings", `document.querySelectorAll('`+sentinel+` li.finding').length === 2 && document.querySelector('main').innerText.includes('2 findings are open')`)
	p.shootBoth("alerts")

	// Not now: silent for a week.
	p.click(mine + ` button.not-now`)
	p.poll("the snoozed finding", `(document.querySelector('`+mine+` .silenced') || {textContent: ''}).textContent.startsWith('Snoozed until')`)
	var snoozed *time.Time
	if err := pool.QueryRow(ctx, `SELECT snoozed_until FROM core.sentinel_findings WHERE key = 'failing-tests:developer'`).Scan(&snoozed); err != nil || snoozed == nil || time.Until(*snoozed) < 6*24*time.Hour {
		t.Fatalf("snoozed until %v (%v)", snoozed, err)
	}

	// Mute asks first, in a sentence; "Keep telling me" leaves it; then mute the subject.
	p.click(theirs + ` button.mute`)
	p.poll("the mute's confirmation", `(document.querySelector('`+theirs+` .confirm') || {innerText: ''}).innerText.includes('Never tell you about failing-tests for concierge again?')`)
	p.shoot("alerts-mute", 390)
	p.width(1280)
	p.click(theirs + ` .confirm button.keep-telling`)
	p.poll("the confirmation gone", `!document.querySelector('`+theirs+` .confirm') && !!document.querySelector('`+theirs+` button.mute')`)
	if n := countMutes(t, ctx, pool); n != 0 {
		t.Fatalf("Keep telling me muted %d", n)
	}
	p.click(theirs + ` button.mute`)
	p.poll("the mute's confirmation again", `!!document.querySelector('`+theirs+` .confirm button.confirm-mute')`)
	p.click(theirs + ` .confirm button.confirm-mute`)
	p.poll("the muted finding and the mute listed", `(document.querySelector('`+theirs+` .silenced') || {textContent: ''}).textContent.startsWith('Muted') && !!document.querySelector('main ul.mutes li[data-mute]')`)
	var kind, subject string
	if err := pool.QueryRow(ctx, `SELECT kind, subject FROM core.sentinel_mutes`).Scan(&kind, &subject); err != nil || kind != "failing-tests" || subject != "concierge" {
		t.Fatalf("the mute stored: %q %q (%v)", kind, subject, err)
	}
	p.shootBoth("alerts-silenced")

	// Unmute, then switch the sentinel off and on.
	p.click(`main ul.mutes li[data-mute] button.unmute`)
	p.poll("no mute", `!document.querySelector('main ul.mutes') && !!document.querySelector('`+theirs+` button.mute')`)
	if n := countMutes(t, ctx, pool); n != 0 {
		t.Fatalf("after Unmute, %d mutes", n)
	}
	p.click(sentinel + ` button.switch-off`)
	p.poll("the sentinel off", `!!document.querySelector('`+sentinel+` button.switch-on') && document.querySelector('`+sentinel+` .pill').textContent === 'off'`)
	var on bool
	if err := pool.QueryRow(ctx, `SELECT enabled FROM core.sentinel_switches WHERE sentinel = 'developer.failing-tests'`).Scan(&on); err != nil || on {
		t.Fatalf("switched off from the page, the switch is %v (%v)", on, err)
	}
	p.click(sentinel + ` button.switch-on`)
	p.poll("the sentinel on", `!!document.querySelector('`+sentinel+` button.switch-off')`)
	if err := pool.QueryRow(ctx, `SELECT enabled FROM core.sentinel_switches WHERE sentinel = 'developer.failing-tests'`).Scan(&on); err != nil || !on {
		t.Fatalf("switched on from the page, the switch is %v (%v)", on, err)
	}
}

func countMutes(t *testing.T, ctx context.Context, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM core.sentinel_mutes`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
