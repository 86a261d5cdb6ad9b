package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5"

	"buddi/core/action"
	"buddi/core/registry"
	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/queue"
	"buddi/runtime/run"
	"buddi/surfaces/dashboard"
)

// fakeTool is a tool the registry knows, reusable or not; it never runs here.
type fakeTool struct {
	name     string
	reusable bool
}

func (f fakeTool) Spec() plugins.Spec {
	return plugins.Spec{Name: f.name, Description: "a test tool", Schema: json.RawMessage(`{"type":"object"}`),
		Effects: []plugins.Effect{plugins.EffectNetWrite}, Tier: plugins.TierGated, ReusableApproval: f.reusable}
}

func (f fakeTool) Describe(context.Context, plugins.Call) (plugins.Envelope, error) {
	return plugins.Envelope{}, nil
}

func (f fakeTool) Execute(context.Context, plugins.Call, *plugins.Envelope) (plugins.Result, error) {
	return plugins.Result{}, nil
}

// A card says whether its tool allows "remember", carries its declared choices, and an
// approval with a pick and "all" is decided with that pick and leaves a standing permission.
func TestApprovalCarriesChoicesAndRemember(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	insert, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(plugins.Manifest{Name: "mail", Version: "1.0.0", Tools: []plugins.Tool{
		fakeTool{name: "mail.send", reusable: true}, fakeTool{name: "mail.purge"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := dashboard.NewServer(dashboard.Deps{
		Health: func(context.Context) health.Report { return health.Report{Status: "ok", Version: "test"} },
		Pool:   pool, Queue: run.JobQueue{Inserter: insert}, Seal: key, Tools: reg,
	})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	signIn(t, pool, key, ts.Listener.Addr().String())

	propose := func(tool string) string {
		var rec action.Record
		err := pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
			var err error
			rec, err = action.Create(context.Background(), tx, key, action.Proposal{
				Call:    plugins.Call{Tool: tool, Args: json.RawMessage(`{}`), Agent: "concierge"},
				Version: "1.0.0",
				Envelope: plugins.Envelope{Summary: "Send mail", Preview: "To: ann@example.com", Effects: []plugins.Effect{plugins.EffectNetWrite},
					Choices: []plugins.Choice{{Name: "from", Options: []string{"home", "work"}, Default: "home"}}},
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return rec.ID
	}
	send, purge := propose("mail.send"), propose("mail.purge")

	for id, want := range map[string]bool{send: true, purge: false} {
		code, body := do(t, "GET", ts.URL+"/api/approvals/"+id, nil, "")
		if code != http.StatusOK || body["reusable"] != want {
			t.Errorf("GET approval %s: %d reusable=%v, want %v", id, code, body["reusable"], want)
		}
		choices, _ := body["envelope"].(map[string]any)["choices"].([]any)
		if len(choices) != 1 {
			t.Errorf("GET approval %s: choices %v, want the declared one", id, body["envelope"])
		}
	}
	jsonHeader := map[string]string{"Content-Type": "application/json"}
	if code, body := do(t, "POST", ts.URL+"/api/approvals/"+purge+"/approve", jsonHeader, `{"remember":"all"}`); code != http.StatusUnprocessableEntity {
		t.Errorf("remember on a tool that does not allow it: %d %v, want 422", code, body)
	}
	code, body := do(t, "POST", ts.URL+"/api/approvals/"+send+"/approve", jsonHeader, `{"picks":{"from":"work"},"remember":"all"}`)
	if code != http.StatusOK {
		t.Fatalf("approve with a pick and remember: %d %v", code, body)
	}
	if picks := body["approval"].(map[string]any)["picks"]; picks.(map[string]any)["from"] != "work" {
		t.Errorf("picks = %v, want from=work", picks)
	}
	resp := get(t, ts.URL+"/api/permissions")
	var standing []action.Standing
	_ = json.NewDecoder(resp.Body).Decode(&standing)
	resp.Body.Close()
	if len(standing) != 1 || standing[0].Tool != "mail.send" || standing[0].Agent != "concierge" || standing[0].ConversationID != "" || standing[0].GrantedBy != "dashboard" {
		t.Errorf("permissions = %+v, want mail.send for concierge in every conversation, from the dashboard", standing)
	}
}
