package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"buddi/agents"
	"buddi/examples"
	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/surfaces/dashboard"
)

// An approval card names the agent that asked by its handle, as the rest of the dashboard
// does, not by its id.
func TestApprovalCardNamesTheHandle(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	srv := dashboard.NewServer(dashboard.Deps{Pool: pool, Seal: key,
		Health: func(context.Context) health.Report { return health.Report{Status: "ok"} },
		Chat: &dashboard.Chat{Catalog: func() (*agents.Catalog, error) {
			return agents.Load(agents.Config{Examples: examples.FS})
		}}})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	signIn(t, pool, key, ts.Listener.Addr().String())
	newAction(t, pool) // asked by the agent whose id is concierge

	resp := get(t, ts.URL+"/api/approvals")
	defer resp.Body.Close()
	var list []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	if card := list[0]["card"].(string); !strings.Contains(card, "asked by @buddi") || strings.Contains(card, "concierge") {
		t.Errorf("the card:\n%s", card)
	}
}
