package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/agents"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/registry"
	"buddi/core/vault"
	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/queue"
	"buddi/runtime/account"
	pt "buddi/runtime/providertest"
	"buddi/runtime/run"
	"buddi/scheduler"
	"buddi/surfaces/dashboard"
)

// settingsBundle is a dashboard with the settings and missions routes over real stores, the
// scripted model server as the provider, and two agents.
type settingsBundle struct {
	ts       *httptest.Server
	pool     *pgxpool.Pool
	model    *pt.Server
	vault    *vault.Memory
	accounts *account.Store
	missions *scheduler.Store
}

func serveSettings(t *testing.T) settingsBundle {
	t.Helper()
	pool := pgtest.Pool(t)
	insert, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for id, roles := range map[string]string{"helper": "[front-desk, recap]", "maker": "[maker]"} {
		def := id == "helper"
		agent := fmt.Sprintf("---\nid: %s\nhandle: \"@%s\"\nname: %s\ndefault: %v\nroles: %s\ntools: []\n---\nYou help.\n", id, id, strings.ToUpper(id[:1])+id[1:], def, roles)
		if err := os.WriteFile(filepath.Join(dir, id+".md"), []byte(agent), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b := settingsBundle{pool: pool, model: pt.New(t), vault: vault.NewMemory(nil), accounts: account.NewStore(pool, key),
		missions: &scheduler.Store{Pool: pool, Insert: insert, Zone: "Europe/Berlin"}}
	srv := dashboard.NewServer(dashboard.Deps{
		Health: func(context.Context) health.Report { return health.Report{Status: "ok"} },
		Pool:   pool, Queue: run.JobQueue{Inserter: insert}, Seal: key,
		Chat: &dashboard.Chat{
			Catalog: func() (*agents.Catalog, error) { return agents.Load(agents.Config{AgentsDir: dir}) },
			Available: func(ctx context.Context, agent string) (bool, string) {
				p, err := (&run.Runner{Accounts: b.accounts}).Check(ctx, b.vault, agent)
				if err != nil {
					return false, err.Error()
				}
				if p != nil {
					return false, p.Sentence
				}
				return true, ""
			}},
		Accounts: b.accounts, Vault: b.vault, Probe: dashboard.AccountProbe{Transport: b.model.TransportConfig()},
		Missions: b.missions,
	})
	b.ts = httptest.NewServer(srv.Handler())
	t.Cleanup(b.ts.Close)
	signIn(t, pool, key, b.ts.Listener.Addr().String())
	return b
}

func (b settingsBundle) get(t *testing.T, path string) map[string]any {
	t.Helper()
	code, out := do(t, "GET", b.ts.URL+path, nil, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, code, out)
	}
	return out
}

// jsonType is the header of a JSON body.
var jsonType = map[string]string{"Content-Type": "application/json"}

func (b settingsBundle) post(t *testing.T, path string, body any, want int) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(body)
	code, out := do(t, "POST", b.ts.URL+path, jsonType, string(raw))
	if code != want {
		t.Fatalf("POST %s %s: %d, want %d: %v", path, raw, code, want, out)
	}
	return out
}

// agentsOf returns /api/agents/settings's agents by id.
func (b settingsBundle) agentsOf(t *testing.T) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, a := range b.get(t, "/api/agents/settings")["agents"].([]any) {
		m := a.(map[string]any)
		out[m["id"].(string)] = m
	}
	return out
}

// The first run: no agent can run; a wrong key is tested and refused with nothing stored; the
// right one is tested, stored in the server's vault (never echoed), made an account and given
// to every agent, which can then run.
func TestFirstRunSetup(t *testing.T) {
	b := serveSettings(t)
	before := b.agentsOf(t)
	if before["helper"]["available"] != false || !strings.Contains(before["helper"]["problem"].(string), "no model account") {
		t.Fatalf("before setup, helper is %v", before["helper"])
	}
	if roles := b.get(t, "/api/agents/settings")["roles"].(map[string]any); fmt.Sprint(roles["recap"]) != "[helper]" || fmt.Sprint(roles["maker"]) != "[maker]" {
		t.Fatalf("roles: %v", roles)
	}

	out := b.post(t, "/api/setup", map[string]string{"wire": "openai", "base_url": b.model.OpenAIBaseURL(), "secret": "sk-wrong", "model": "model-one"}, http.StatusOK)
	if out["ok"] != false || out["sentence"] == "" {
		t.Fatalf("a wrong key: %v", out)
	}
	if list, _ := b.accounts.List(context.Background()); len(list) != 0 {
		t.Fatalf("a failed test stored an account: %v", list)
	}
	if names, _ := b.vault.List(); len(names) != 0 {
		t.Fatalf("a failed test stored a key: %v", names)
	}

	b.model.Script(pt.Text("OK"))
	out = b.post(t, "/api/setup", map[string]string{"wire": "openai", "base_url": b.model.OpenAIBaseURL(), "secret": pt.APIKey, "model": "model-one"}, http.StatusOK)
	if out["ok"] != true || !strings.HasPrefix(out["sentence"].(string), "It works") || out["account"] != "127-0-0-1" && out["account"] != "local" {
		t.Fatalf("setup: %v", out)
	}
	name := out["account"].(string)
	if fmt.Sprint(out["agents"]) != "[helper maker]" {
		t.Fatalf("the account was given to %v", out["agents"])
	}
	a, err := b.accounts.Get(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if secret, err := b.vault.Get(a.SecretName); err != nil || secret != pt.APIKey {
		t.Fatalf("the vault holds %q, %v under %s", secret, err, a.SecretName)
	}
	for id, ag := range b.agentsOf(t) {
		if ag["available"] != true || ag["account"] != name || ag["model"] != "model-one" {
			t.Fatalf("after setup, %s is %v", id, ag)
		}
	}
	listed := b.get(t, "/api/accounts")
	raw, _ := json.Marshal(listed)
	if strings.Contains(string(raw), pt.APIKey) {
		t.Fatalf("the accounts list carries the key: %s", raw)
	}
	// A second setup names its account apart, and gives it to nobody (everyone can run).
	b.model.Script(pt.Text("OK"))
	out = b.post(t, "/api/setup", map[string]string{"wire": "openai", "base_url": b.model.OpenAIBaseURL(), "secret": pt.APIKey, "model": "model-two"}, http.StatusOK)
	if out["account"] != name+"-2" || fmt.Sprint(out["agents"]) != "[]" {
		t.Fatalf("a second setup: %v", out)
	}
}

// Settings → Accounts and models: add (the key to the vault, never echoed), refuse a
// duplicate without touching the stored key, test, disable (the agent then cannot run, and
// says why), enable, and set an agent's account and model.
func TestAccountsAndAgents(t *testing.T) {
	b := serveSettings(t)
	add := map[string]string{"name": "work", "wire": "anthropic", "base_url": b.model.URL, "secret_name": "WORK_KEY", "secret": pt.APIKey}
	out := b.post(t, "/api/accounts", add, http.StatusCreated)
	raw, _ := json.Marshal(out)
	if strings.Contains(string(raw), pt.APIKey) {
		t.Fatalf("adding echoes the key: %s", raw)
	}
	dup := map[string]string{"name": "work", "wire": "anthropic", "secret_name": "WORK_KEY", "secret": "sk-other"}
	b.post(t, "/api/accounts", dup, http.StatusConflict)
	if v, _ := b.vault.Get("WORK_KEY"); v != pt.APIKey {
		t.Fatalf("a refused duplicate replaced the key with %q", v)
	}
	b.post(t, "/api/accounts", map[string]string{"name": "Bad Name", "wire": "anthropic", "secret_name": "X_KEY", "secret": "x"}, http.StatusBadRequest)
	b.post(t, "/api/accounts", map[string]string{"name": "nokey", "wire": "anthropic", "secret_name": "ABSENT_KEY"}, http.StatusBadRequest)
	b.post(t, "/api/accounts", map[string]string{"name": "other", "wire": "gopher", "secret_name": "X_KEY", "secret": "x"}, http.StatusBadRequest)

	b.model.Script(pt.Text("OK"))
	if out := b.post(t, "/api/accounts/work/test", map[string]string{"model": "model-one"}, http.StatusOK); out["ok"] != true || !strings.Contains(out["sentence"].(string), "It works") {
		t.Fatalf("test: %v", out)
	}
	b.post(t, "/api/accounts/absent/test", map[string]string{"model": "model-one"}, http.StatusNotFound)
	b.post(t, "/api/accounts/work/test", map[string]string{}, http.StatusBadRequest)

	b.post(t, "/api/agents/maker/account", map[string]string{"account": "work", "model": "model-one"}, http.StatusOK)
	b.post(t, "/api/agents/nobody/account", map[string]string{"account": "work", "model": "model-one"}, http.StatusNotFound)
	b.post(t, "/api/agents/maker/account", map[string]string{"account": "absent", "model": "model-one"}, http.StatusBadRequest)
	b.post(t, "/api/agents/maker/account", map[string]string{"account": "work"}, http.StatusBadRequest)
	if maker := b.agentsOf(t)["maker"]; maker["available"] != true || maker["account"] != "work" {
		t.Fatalf("maker after set: %v", maker)
	}
	accs := b.get(t, "/api/accounts")["accounts"].([]any)
	if len(accs) != 1 || fmt.Sprint(accs[0].(map[string]any)["agents"]) != "[maker]" || accs[0].(map[string]any)["enabled"] != true {
		t.Fatalf("accounts: %v", accs)
	}

	b.post(t, "/api/accounts/work/disable", nil, http.StatusOK)
	if maker := b.agentsOf(t)["maker"]; maker["available"] != false || !strings.Contains(maker["problem"].(string), "disabled") {
		t.Fatalf("maker on a disabled account: %v", maker)
	}
	b.post(t, "/api/accounts/work/enable", nil, http.StatusOK)
	if maker := b.agentsOf(t)["maker"]; maker["available"] != true {
		t.Fatalf("maker on an enabled account: %v", maker)
	}
	b.post(t, "/api/accounts/absent/disable", nil, http.StatusNotFound)
}

// A locked vault stores no key: the owner is told the vault is locked, and no account is added.
func TestAccountsWithALockedVault(t *testing.T) {
	b := serveSettings(t)
	b.vault.Lock("BUDDI_VAULT_KEY is not set")
	code, out := do(t, "POST", b.ts.URL+"/api/accounts", jsonType, `{"name":"work","wire":"anthropic","secret_name":"WORK_KEY","secret":"sk-x"}`)
	if code != http.StatusServiceUnavailable || !strings.Contains(fmt.Sprint(out["error"]), "locked") {
		t.Fatalf("adding with a locked vault: %d %v", code, out)
	}
	if list, _ := b.accounts.List(context.Background()); len(list) != 0 {
		t.Fatalf("an account was added: %v", list)
	}
}

// Missions: add (checked), list, run now (an occurrence and its job), pause and resume, and
// for a mission that raised "Still useful?", Keep (asked again only after as many silent runs)
// or Stop (switched off).
func TestMissionsPage(t *testing.T) {
	b := serveSettings(t)
	ctx := context.Background()
	b.post(t, "/api/missions", map[string]string{"name": "news", "agent": "helper", "cron": "0 8 * * *"}, http.StatusBadRequest)
	b.post(t, "/api/missions", map[string]string{"name": "news", "agent": "nobody", "cron": "0 8 * * *", "prompt": "p"}, http.StatusBadRequest)
	if _, out := do(t, "POST", b.ts.URL+"/api/missions", jsonType, `{"name":"news","agent":"helper","cron":"at eight","prompt":"p"}`); !strings.Contains(fmt.Sprint(out["error"]), "not added") {
		t.Fatalf("a bad schedule: %v", out)
	}
	m := b.post(t, "/api/missions", map[string]string{"name": "news", "agent": "helper", "cron": "0 8 * * *", "prompt": "Tell me the news."}, http.StatusCreated)["mission"].(map[string]any)
	if m["timezone"] != "Europe/Berlin" || m["enabled"] != true {
		t.Fatalf("added: %v", m)
	}
	id := int64(m["id"].(float64))
	list := b.get(t, "/api/missions")["missions"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["still_useful"] != false {
		t.Fatalf("list: %v", list)
	}
	if out := b.post(t, fmt.Sprintf("/api/missions/%d/run", id), nil, http.StatusOK); out["occurrence"] == nil {
		t.Fatalf("run now: %v", out)
	}
	if occ, _ := b.missions.Occurrences(ctx, id, 10); len(occ) != 1 || occ[0].Reason != scheduler.RunNowReason {
		t.Fatalf("occurrences after run now: %v", occ)
	}
	b.post(t, fmt.Sprintf("/api/missions/%d/pause", id), nil, http.StatusOK)
	if got, _ := b.missions.Get(ctx, id); got.Enabled {
		t.Fatal("pause left it on")
	}
	b.post(t, fmt.Sprintf("/api/missions/%d/resume", id), nil, http.StatusOK)
	b.post(t, "/api/missions/999999/run", nil, http.StatusNotFound)
	b.post(t, "/api/missions/999999/keep", nil, http.StatusNotFound)

	// Silent long enough to ask.
	if _, err := b.pool.Exec(ctx, `UPDATE core.missions SET quiet_runs = $2 WHERE id = $1`, id, scheduler.StillUsefulAfter); err != nil {
		t.Fatal(err)
	}
	if list := b.get(t, "/api/missions")["missions"].([]any); list[0].(map[string]any)["still_useful"] != true {
		t.Fatalf("a quiet mission does not ask: %v", list)
	}
	b.post(t, fmt.Sprintf("/api/missions/%d/keep", id), nil, http.StatusOK)
	if got, _ := b.missions.Get(ctx, id); got.QuietRuns != 0 || !got.Enabled || got.StillUseful() {
		t.Fatalf("after Keep: %+v", got)
	}
	if _, err := b.pool.Exec(ctx, `UPDATE core.missions SET quiet_runs = $2 WHERE id = $1`, id, scheduler.StillUsefulAfter); err != nil {
		t.Fatal(err)
	}
	b.post(t, fmt.Sprintf("/api/missions/%d/stop", id), nil, http.StatusOK)
	if got, _ := b.missions.Get(ctx, id); got.Enabled || got.StillUseful() {
		t.Fatalf("after Stop: %+v", got)
	}
}

// Every new write route checks the CSRF token like the others.
func TestSettingsWritesCheckCSRF(t *testing.T) {
	b := serveSettings(t)
	for _, path := range []string{"/api/accounts", "/api/accounts/work/test", "/api/accounts/work/enable", "/api/accounts/work/disable",
		"/api/agents/helper/account", "/api/setup", "/api/missions", "/api/missions/1/run", "/api/missions/1/pause",
		"/api/missions/1/resume", "/api/missions/1/keep", "/api/missions/1/stop"} {
		if code, _ := do(t, "POST", b.ts.URL+path, map[string]string{dashboard.CSRFHeader: "", "Content-Type": "application/json"}, `{}`); code != http.StatusForbidden {
			t.Errorf("POST %s without the CSRF header: %d", path, code)
		}
	}
}

// Missions in words: the preview reads words or cron in the owner's zone and says how to write
// what it cannot read; a mission added in words has the cron they mean; its runs list what ran
// when, coalesced or skipped, with the report's first line.
func TestMissionsInWordsAndRuns(t *testing.T) {
	b := serveSettings(t)
	ctx := context.Background()
	when := b.get(t, "/api/missions/when?words="+url.QueryEscape("every weekday at 7:30"))
	if when["cron"] != "30 7 * * 1-5" || when["words"] != "weekdays at 07:30" || when["zone"] != "Europe/Berlin" || len(when["next_said"].([]any)) != 3 {
		t.Fatalf("preview: %v", when)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	first, err := time.Parse(time.RFC3339, when["next"].([]any)[0].(string))
	if err != nil || first.In(berlin).Format("15:04") != "07:30" || first.In(berlin).Weekday() == time.Saturday || first.In(berlin).Weekday() == time.Sunday {
		t.Fatalf("next: %v (%v)", when["next"], err)
	}
	if got := b.get(t, "/api/missions/when?words="+url.QueryEscape("0 8 * * *")); got["words"] != "every day at 08:00" {
		t.Fatalf("a cron preview: %v", got)
	}
	code, out := do(t, "GET", b.ts.URL+"/api/missions/when?words="+url.QueryEscape("every monday"), nil, "")
	if msg := fmt.Sprint(out["error"]); code != http.StatusBadRequest || !strings.Contains(msg, "at what time") || !strings.Contains(msg, "write it like") {
		t.Fatalf("an unsure phrase: %d %v", code, out)
	}
	if _, out := do(t, "POST", b.ts.URL+"/api/missions", jsonType, `{"name":"n","agent":"helper","when":"every 45 minutes","prompt":"p"}`); !strings.Contains(fmt.Sprint(out["error"]), "divide the hour") {
		t.Fatalf("a refused phrase was added: %v", out)
	}

	added := b.post(t, "/api/missions", map[string]string{"name": "weather", "agent": "helper", "when": "mondays and thursdays at 18:00", "prompt": "Weather?"}, http.StatusCreated)
	m := added["mission"].(map[string]any)
	if m["cron"] != "0 18 * * 1,4" || m["words"] != "Mondays and Thursdays at 18:00" || added["when"].(map[string]any)["words"] != m["words"] {
		t.Fatalf("added in words: %v", added)
	}
	id := int64(m["id"].(float64))
	if list := b.get(t, "/api/missions")["missions"].([]any); list[0].(map[string]any)["words"] != "Mondays and Thursdays at 18:00" {
		t.Fatalf("list: %v", list)
	}

	if runs := b.get(t, fmt.Sprintf("/api/missions/%d/occurrences", id))["occurrences"].([]any); len(runs) != 0 {
		t.Fatalf("runs before any: %v", runs)
	}
	base := time.Date(2026, 1, 5, 17, 0, 0, 0, time.UTC)
	for i, o := range []struct{ state, reason, run string }{{"delivered", "", "run-1"}, {"skipped", "coalesced", ""}, {"silent", "nothing new", "run-3"}} {
		if _, err := b.pool.Exec(ctx, `INSERT INTO core.occurrences (mission_id, schedule_revision, instant, state, reason, run_id, covers) VALUES ($1, 1, $2, $3, $4, $5, 1)`,
			id, base.Add(time.Duration(i)*time.Hour), o.state, o.reason, o.run); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eventlog.Append(ctx, b.pool, events.MissionReported, "", events.MissionReportedPayload{RunID: "run-1", Report: "Sun all week.\nDetails follow."}); err != nil {
		t.Fatal(err)
	}
	runs := b.get(t, fmt.Sprintf("/api/missions/%d/occurrences", id))["occurrences"].([]any)
	if len(runs) != 3 {
		t.Fatalf("runs: %v", runs)
	}
	newest, middle, oldest := runs[0].(map[string]any), runs[1].(map[string]any), runs[2].(map[string]any)
	if newest["state"] != "silent" || middle["state"] != "skipped" || middle["reason"] != "coalesced" || oldest["report"] != "Sun all week." || newest["report"] != nil {
		t.Fatalf("runs: %v", runs)
	}
	if code, _ := do(t, "GET", b.ts.URL+"/api/missions/x/occurrences", nil, ""); code != http.StatusNotFound {
		t.Fatalf("a mission that is no number: %d", code)
	}
}

// Settings → Agents says what each agent may do: the tools of its grant the registry knows,
// each with its tier, the ones that run without asking first listed first.
func TestAgentSettingsSayWhatEachMayDo(t *testing.T) {
	pool := pgtest.Pool(t)
	dir := t.TempDir()
	agent := "---\nid: helper\nhandle: \"@helper\"\nname: Helper\ndefault: true\ntools: [schedule.propose, reminder.set, schedule.list_mine]\n---\nYou help.\n"
	if err := os.WriteFile(filepath.Join(dir, "helper.md"), []byte(agent), 0o600); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(scheduler.ScheduleManifest(pool), scheduler.ReminderManifest(pool, scheduler.DefaultReminderLimits))
	if err != nil {
		t.Fatal(err)
	}
	srv := dashboard.NewServer(dashboard.Deps{Pool: pool, Seal: key, Tools: reg,
		Health:   func(context.Context) health.Report { return health.Report{Status: "ok"} },
		Chat:     &dashboard.Chat{Catalog: func() (*agents.Catalog, error) { return agents.Load(agents.Config{AgentsDir: dir}) }},
		Accounts: account.NewStore(pool, key), Vault: vault.NewMemory(nil), Probe: dashboard.AccountProbe{}})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	signIn(t, pool, key, ts.Listener.Addr().String())
	code, out := do(t, "GET", ts.URL+"/api/agents/settings", nil, "")
	if code != http.StatusOK {
		t.Fatalf("GET /api/agents/settings: %d %v", code, out)
	}
	may := out["agents"].([]any)[0].(map[string]any)["may"].([]any)
	var got []string
	for _, m := range may {
		tool := m.(map[string]any)
		got = append(got, fmt.Sprint(tool["name"], ":", tool["tier"]))
		if tool["description"] == "" {
			t.Errorf("%v has no description", tool["name"])
		}
	}
	if want := "[reminder.set:auto schedule.list_mine:auto schedule.propose:gated]"; fmt.Sprint(got) != want {
		t.Errorf("may: %v, want %s", got, want)
	}
}
