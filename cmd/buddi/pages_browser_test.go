package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	pt "buddi/runtime/providertest"
	"buddi/scheduler"
)

// The owner pages in a real browser, from an empty home: no agent can run, so Home is the
// first-run form; a wrong key is refused with the provider's sentence; the scripted model
// server's key works, and the agent's one-line answer is drawn. Then Settings → Accounts and
// models, Missions (add one, run it now, pause, answer "Still useful?" with Keep) and Health,
// each at 1280 and 390 px wide, with screenshots in the test's artifact directory.
func TestDashboardPagesInBrowser(t *testing.T) {
	model := pt.New(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, model.CAPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	home, port, vars := env(t, "BUDDI_VAULT_KEY=aGVsbG8taGVsbG8taGVsbG8taGVsbG8taGVsbG8tISE=", "SSL_CERT_FILE="+ca)
	if code, out, errOut := runBuddi(t, vars, 2*time.Minute, "db", "migrate"); code != 0 {
		t.Fatalf("db migrate: %d %s%s", code, out, errOut)
	}
	s := startServe(t, home, port, vars)
	s.health()

	p := openPage(t, s)

	var link struct{ URL string }
	if code, out, errOut := runBuddi(t, vars, time.Minute, "dashboard", "--json"); code != 0 || json.Unmarshal([]byte(out), &link) != nil {
		t.Fatalf("buddi dashboard: %d %s%s", code, out, errOut)
	}
	p.width(1280)
	p.navigate(link.URL)
	// An empty home: the first-run form, not Home.
	p.poll("the first-run form", `!!document.querySelector('main form[data-form=setup]') && !document.querySelector('main .approval') && !document.querySelector('main').innerText.includes('Needs you')`)
	p.shootBoth("first-run")

	// A wrong key: the provider's refusal, in a sentence; nothing stored.
	p.set(`main form[data-form=setup] [name=wire]`, "anthropic")
	p.set(`main form[data-form=setup] [name=base_url]`, model.URL)
	p.set(`main form[data-form=setup] [name=secret]`, "sk-not-the-key")
	p.set(`main form[data-form=setup] [name=model]`, "model-one")
	p.click(`main form[data-form=setup] button[type=submit]`)
	p.poll("the wrong key's sentence", `(() => { const r = document.querySelector('main .first-run .result'); return !!r && r.textContent !== '' && !r.textContent.startsWith('Testing') })()`)
	if got := p.eval(`document.querySelector('main .first-run .result').textContent`); strings.HasPrefix(got, "It works") {
		t.Fatalf("a wrong key works: %s", got)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "accounts", "list", "--json"); code != 0 || strings.Contains(out, "anthropic") {
		t.Fatalf("a refused key left an account: %d %s", code, out)
	}

	// The right key: tested, stored, given to the agents; the agent answers in one line.
	model.Script(pt.Text("OK"), pt.Text("Hello! I am here ", "whenever you need me."))
	p.set(`main form[data-form=setup] [name=secret]`, pt.APIKey)
	p.click(`main form[data-form=setup] button[type=submit]`)
	p.poll("the agent's first answer", `!!document.querySelector('main .first-answer') && document.querySelector('main .first-answer').innerText.includes('Hello! I am here whenever you need me.')`)
	if got := p.eval(`document.querySelector('main .first-run .result').textContent`); !strings.HasPrefix(got, "It works") {
		t.Fatalf("the test's sentence: %s", got)
	}
	if got := p.eval(`document.querySelector('main').innerHTML`); strings.Contains(got, pt.APIKey) {
		t.Fatal("the page still holds the key")
	}
	p.shootBoth("first-answer")
	p.click(`main .first-run button.done`)
	p.poll("Home after the first run", `document.querySelector('main').innerText.includes('Needs you')`)

	// Settings → Accounts and models: the account, its agents, test it, every agent can run.
	p.goTo("#/settings/accounts")
	p.poll("the account", `!!document.querySelector('main [data-account]') && document.querySelectorAll('main [data-agent-settings]').length > 0`)
	if got := p.eval(`[...document.querySelectorAll('main [data-agent-settings] .pill')].map(e => e.textContent).join()`); strings.Contains(got, "cannot run") {
		t.Fatalf("after the first run, agents cannot run: %s\n%s", got, p.eval(`document.querySelector('main').innerText`))
	}
	// What each agent may do: @dev's grant, developer.run only in the owner's own requests, as its mode decides.
	p.eval(`document.querySelector('main [data-may=developer]').open = true; ''`)
	p.poll("what @dev may do", `[...document.querySelectorAll('main [data-may=developer] li')].some(li => li.dataset.tool === 'developer.run' && li.innerText.includes('only in your own requests') && li.innerText.includes('mode'))`)
	model.Script(pt.Text("OK"))
	p.click(`main [data-account] button.test`)
	p.poll("the account's test", `document.querySelector('main [data-account] .result').textContent.startsWith('It works')`)
	p.shootBoth("settings-accounts")

	// Missions: add one in the form, run it now, pause it.
	p.goTo("#/missions")
	p.poll("the mission form", `!!document.querySelector('main form[data-form=mission] select[name=agent] option')`)
	p.set(`main form[data-form=mission] [name=name]`, "morning news")
	// The one When field takes words, and says what they mean (or how to write them) as the owner types.
	p.set(`main form[data-form=mission] [name=when]`, "every monday")
	p.poll("the refusal of words without a time", `document.querySelector('main .when-preview').textContent.includes('at what time')`)
	p.set(`main form[data-form=mission] [name=when]`, "weekdays at 8am")
	p.poll("the preview of the words", `/^weekdays at 08:00 \(.+\) · 0 8 \* \* 1-5 · next: \w{3} \w{3} \d+ 08:00/.test(document.querySelector('main .when-preview').textContent)`)
	p.set(`main form[data-form=mission] [name=agent]`, "concierge")
	p.set(`main form[data-form=mission] [name=prompt]`, "Tell me the news that matters to me.")
	p.click(`main form[data-form=mission] button[type=submit]`)
	p.poll("the mission's card", `!!document.querySelector('main [data-mission] button.pause')`)
	var id int64
	dbctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(dbctx, appDSN(t, s.home))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(dbctx, `SELECT id FROM core.missions WHERE name = 'morning news'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	model.Script(pt.Text("Nothing new this morning."))
	clicked := time.Now().Add(-time.Second)
	p.click(`main [data-mission] button.run`)
	// The run-now occurrence: its reason says "run now" until its run settles, which may be
	// before the first look, so it is found by its instant (the mission's own are at 08:00).
	waitFor(t, "the run-now occurrence", 30*time.Second, func() bool {
		var n int
		return conn.QueryRow(dbctx, `SELECT count(*) FROM core.occurrences WHERE mission_id = $1 AND instant >= $2`, id, clicked).Scan(&n) == nil && n == 1
	})
	p.poll("the card after run now", `!!document.querySelector('main [data-mission] button.pause')`)
	if got := p.eval(`document.querySelector('main [data-mission] .muted').textContent`); !strings.Contains(got, "weekdays at 08:00") {
		t.Fatalf("the card says its schedule as %q", got)
	}
	// Its runs: the one run now, opened from the card.
	p.click(`main [data-mission] details.runs summary`)
	// Its one run says why it ran, or, once the run has ended, how it settled (the model's
	// answer made no decision, so it settles silent): which one depends on the run's pace.
	p.poll("the mission's runs", `[...document.querySelectorAll('main [data-mission] details.runs li.run')].length === 1 && /`+scheduler.RunNowReason+`|silent/.test(document.querySelector('main [data-mission] details.runs li.run').textContent)`)
	p.click(`main [data-mission] button.pause`)
	p.poll("the paused mission", `!!document.querySelector('main [data-mission] button.resume')`)
	p.click(`main [data-mission] button.resume`)
	p.poll("the resumed mission", `!!document.querySelector('main [data-mission] button.pause')`)
	// Silent long enough to ask "Still useful?": Keep.
	if _, err := conn.Exec(dbctx, `UPDATE core.missions SET quiet_runs = $2 WHERE id = $1`, id, scheduler.StillUsefulAfter); err != nil {
		t.Fatal(err)
	}
	p.goTo("#/home")
	p.poll("Home", `document.querySelector('main').innerText.includes('Needs you')`)
	p.goTo("#/missions")
	p.poll("Still useful?", `!!document.querySelector('main [data-mission] .still-useful button.keep')`)
	p.shootBoth("missions")
	p.click(`main [data-mission] .still-useful button.keep`)
	p.poll("the kept mission", `!document.querySelector('main [data-mission] .still-useful') && !!document.querySelector('main [data-mission] button.pause')`)
	var quiet int
	if err := conn.QueryRow(dbctx, `SELECT quiet_runs FROM core.missions WHERE id = $1`, id).Scan(&quiet); err != nil || quiet != 0 {
		t.Fatalf("after Keep, quiet_runs %d (%v)", quiet, err)
	}

	// Health: the live supervision tree with restart counts, the queue and the database.
	p.goTo("#/health")
	p.poll("the supervision tree", `document.querySelectorAll('main ol.tree li').length > 3 && document.querySelector('main ol.tree').innerText.includes('restarts') && document.querySelector('main').innerText.includes('PostgreSQL')`)
	p.shootBoth("health")

	// Settings → Developer: the workspaces with their modes, the processes, the remembered
	// commands, the tailnet previews' switch.
	p.goTo("#/settings/developer")
	p.poll("Settings → Developer", `document.querySelector('main').innerText.includes('Commands you allowed') && !!document.querySelector('main nav.sub a.active[href="#/settings/developer"]')`)
	p.shootBoth("settings-developer")
}
