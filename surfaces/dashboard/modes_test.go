package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"buddi/agents"
	"buddi/core/executor"
	"buddi/core/permission"
	"buddi/core/vault"
	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/queue"
	"buddi/runtime/account"
	pt "buddi/runtime/providertest"
	"buddi/runtime/run"
	"buddi/surfaces/dashboard"
)

// Settings → Agents shows each agent's mode and sets it: the database holds what was set,
// and an unknown mode or agent is refused with nothing written.
func TestAgentModeRoutes(t *testing.T) {
	pool := pgtest.Pool(t)
	insert, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	agent := "---\nid: dev\nhandle: \"@dev\"\nname: Dev\ndefault: true\ntools: []\n---\nYou code.\n"
	if err := os.WriteFile(filepath.Join(dir, "dev.md"), []byte(agent), 0o600); err != nil {
		t.Fatal(err)
	}
	modes := executor.NewModes(pool, key)
	model := pt.New(t)
	srv := dashboard.NewServer(dashboard.Deps{
		Health: func(context.Context) health.Report { return health.Report{Status: "ok"} },
		Pool:   pool, Queue: run.JobQueue{Inserter: insert}, Seal: key,
		Chat:     &dashboard.Chat{Catalog: func() (*agents.Catalog, error) { return agents.Load(agents.Config{AgentsDir: dir}) }},
		Accounts: account.NewStore(pool, key), Vault: vault.NewMemory(nil), Probe: dashboard.AccountProbe{Transport: model.TransportConfig()},
		Modes: modes,
	})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	signIn(t, pool, key, ts.Listener.Addr().String())

	modeOnCard := func() string {
		t.Helper()
		code, out := do(t, "GET", ts.URL+"/api/agents/settings", nil, "")
		if code != http.StatusOK {
			t.Fatalf("GET /api/agents/settings: %d %v", code, out)
		}
		for _, a := range out["agents"].([]any) {
			if m := a.(map[string]any); m["id"] == "dev" {
				mode, _ := m["mode"].(string)
				return mode
			}
		}
		t.Fatal("no dev on the agents' settings")
		return ""
	}
	post := func(agent, mode string, want int) map[string]any {
		t.Helper()
		raw, _ := json.Marshal(map[string]string{"mode": mode})
		code, out := do(t, "POST", ts.URL+"/api/agents/"+agent+"/mode", jsonType, string(raw))
		if code != want {
			t.Fatalf("POST mode %s of %s: %d, want %d: %v", mode, agent, code, want, out)
		}
		return out
	}

	if got := modeOnCard(); got != "auto" {
		t.Fatalf("the card's mode before any is set: %q, want auto", got)
	}
	if out := post("dev", "plan", http.StatusOK); out["mode"] != "plan" {
		t.Fatalf("set plan: %v", out)
	}
	if got := modeOnCard(); got != "plan" {
		t.Errorf("the card after plan: %q", got)
	}
	m, err := modes.Mode(context.Background(), "dev")
	if err != nil || m.Mode != permission.ModePlan || m.UpdatedBy != "owner:dashboard" {
		t.Errorf("on record: %+v, %v; want plan by owner:dashboard", m, err)
	}
	post("@dev", "accept-edits", http.StatusOK) // by handle too
	if got := modeOnCard(); got != "accept-edits" {
		t.Errorf("the card after accept-edits: %q", got)
	}
	if out := post("dev", "yolo", http.StatusBadRequest); !strings.Contains(out["error"].(string), "plan, accept-edits or auto") {
		t.Errorf("an unknown mode: %v", out)
	}
	post("nobody", "plan", http.StatusNotFound)
	if got := modeOnCard(); got != "accept-edits" {
		t.Errorf("refused requests changed the mode: %q", got)
	}
}
