package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/action"
	"buddi/core/seal"
	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/queue"
	"buddi/runtime/run"
	"buddi/surfaces/dashboard"
	"buddi/surfaces/webauth"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv("DASHBOARD_TEST_STRANGER"); spec != "" {
		stranger(spec) // this binary, run as another account by TestAnotherLocalAccountIsRefused
		return
	}
	pgtest.Main(m)
}

// key is the installation's seal key of the test servers.
var key, _ = seal.New(bytes.Repeat([]byte{5}, 32))

// sessions holds the owner's session token of each test server, by host:port: do and get
// send it, as the owner's signed-in browser would.
var sessions sync.Map

// signIn opens a session on pool under key for the server at addr (host:port), the way a
// redeemed ticket does.
func signIn(t *testing.T, pool *pgxpool.Pool, key seal.Key, addr string) string {
	t.Helper()
	token, _, err := webauth.Open(context.Background(), pool, key, webauth.PurposeSession, "")
	if err != nil {
		t.Fatal(err)
	}
	sessions.Store(addr, token)
	return token
}

func serve(t *testing.T) (*httptest.Server, *pgxpool.Pool) {
	t.Helper()
	pool := pgtest.Pool(t)
	insert, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	srv := dashboard.NewServer(dashboard.Deps{
		Health: func(context.Context) health.Report { return health.Report{Status: "ok", Version: "test"} },
		Pool:   pool, Queue: run.JobQueue{Inserter: insert}, Seal: key,
	})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	signIn(t, pool, key, ts.Listener.Addr().String())
	return ts, pool
}

// addSession adds the owner's session cookie for the server req goes to, if the test signed
// in there.
func addSession(req *http.Request) {
	if token, ok := sessions.Load(req.URL.Host); ok {
		req.AddCookie(&http.Cookie{Name: "buddi_session_" + req.URL.Port(), Value: token.(string)})
	}
}

// get is http.Get from the owner's signed-in browser.
func get(t *testing.T, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	addSession(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func newAction(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var rec action.Record
	err := pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
		var err error
		rec, err = action.Create(context.Background(), tx, key, action.Proposal{
			Call:    plugins.Call{Tool: "mail.send", Args: json.RawMessage(`{"to":"ann@example.com"}`), Agent: "concierge"},
			Version: "1.0.0",
			Envelope: plugins.Envelope{Summary: "Send mail to ann@example.com", Preview: "To: ann@example.com",
				Effects: []plugins.Effect{plugins.EffectNetWrite}},
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec.ID
}

// testCSRF is the CSRF token the test requests double-submit.
const testCSRF = "test-csrf-token-0123456789abcdefghijklmnopqrstuv"

func do(t *testing.T, method, url string, header map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method != "GET" {
		// What buddi's own page sends: its origin, and the CSRF token in the cookie and the
		// header. A test's header map overrides either ("" removes it).
		req.Header.Set("Origin", "http://"+req.Host)
		req.Header.Set(dashboard.CSRFHeader, testCSRF)
		req.AddCookie(&http.Cookie{Name: "buddi_csrf_" + req.URL.Port(), Value: testCSRF})
	}
	addSession(req)
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func TestApprovalsListShowDecide(t *testing.T) {
	t.Parallel()
	ts, pool := serve(t)
	id := newAction(t, pool)

	resp := get(t, ts.URL+"/api/approvals")
	var list []map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list) != 1 || list[0]["id"] != id || !strings.Contains(list[0]["card"].(string), "To: ann@example.com") {
		t.Fatalf("list = %v", list)
	}

	jsonHeader := map[string]string{"Content-Type": "application/json"}
	code, body := do(t, "POST", ts.URL+"/api/approvals/"+id+"/approve", jsonHeader, `{"reason":"fine"}`)
	if code != http.StatusOK || body["approval"].(map[string]any)["state"] != "approved" {
		t.Fatalf("approve: %d %v", code, body)
	}
	code, body = do(t, "POST", ts.URL+"/api/approvals/"+id+"/reject", jsonHeader, ``)
	if code != http.StatusConflict || body["state"] != "approved" || body["decided_by"] != "dashboard" {
		t.Errorf("late reject: %d %v; want 409 telling it was approved on the dashboard", code, body)
	}
	code, body = do(t, "GET", ts.URL+"/api/approvals/"+id, nil, "")
	if code != http.StatusOK || body["approval"].(map[string]any)["reason"] != "fine" {
		t.Errorf("show: %d %v", code, body)
	}
	if code, _ := do(t, "GET", ts.URL+"/api/approvals?state=bogus", nil, ""); code != http.StatusBadRequest {
		t.Errorf("GET ?state=bogus: %d, want 400", code)
	}
	for _, missing := range []string{"00000000-0000-4000-8000-000000000000", "not-an-id"} {
		if code, _ := do(t, "GET", ts.URL+"/api/approvals/"+missing, nil, ""); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", missing, code)
		}
	}
}

// Every write route refuses what another site could send.
func TestWritesRefuseForeignRequests(t *testing.T) {
	t.Parallel()
	ts, pool := serve(t)
	id := newAction(t, pool)
	for _, route := range []string{"/approve", "/reject"} {
		url := ts.URL + "/api/approvals/" + id + route
		tests := []struct {
			name   string
			header map[string]string
			want   int
		}{
			{"form post", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
			{"no content type", nil, http.StatusUnsupportedMediaType},
			{"foreign origin", map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example"}, http.StatusForbidden},
			{"cross-site fetch", map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
			{"unknown body field", map[string]string{"Content-Type": "application/json"}, http.StatusBadRequest},
		}
		for _, tt := range tests {
			body := ""
			if tt.name == "unknown body field" {
				body = `{"approve_everything":true}`
			}
			if code, _ := do(t, "POST", url, tt.header, body); code != tt.want {
				t.Errorf("%s %s: %d, want %d", route, tt.name, code, tt.want)
			}
		}
	}
	if rec, _ := action.Get(context.Background(), pool, id); rec.Approval.State != action.Pending {
		t.Errorf("a refused request changed the action to %s", rec.Approval.State)
	}
}

func TestPermissionsListAndRevoke(t *testing.T) {
	t.Parallel()
	ts, pool := serve(t)
	var granted action.Standing
	err := pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
		var err error
		granted, err = action.Grant(context.Background(), tx, key, plugins.Spec{Name: "dev.test", ReusableApproval: true}, "1", "dev", "", "terminal")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	url := ts.URL + "/api/permissions/" + strconv.FormatInt(granted.ID, 10) + "/revoke"
	if code, _ := do(t, "POST", url, map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"}, ""); code != http.StatusForbidden {
		t.Errorf("foreign revoke: %d, want 403", code)
	}
	if code, _ := do(t, "POST", url, map[string]string{"Content-Type": "text/plain"}, ""); code != http.StatusUnsupportedMediaType {
		t.Errorf("non-JSON revoke: %d, want 415", code)
	}
	if code, body := do(t, "POST", url, map[string]string{"Content-Type": "application/json"}, ""); code != http.StatusOK || body["revoked"] != true {
		t.Errorf("revoke: %d %v", code, body)
	}
	if code, _ := do(t, "POST", url, map[string]string{"Content-Type": "application/json"}, ""); code != http.StatusNotFound {
		t.Errorf("second revoke: %d, want 404", code)
	}
	resp := get(t, ts.URL+"/api/permissions")
	defer resp.Body.Close()
	var list []action.Standing
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list) != 1 || list[0].RevokedBy != "dashboard" {
		t.Errorf("list = %+v, %v", list, err)
	}
}

// A page on another site whose name resolves to 127.0.0.1 (DNS rebinding) sends its own name
// as Host, with a matching Origin: every route refuses it.
func TestForeignHostIsRefused(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	insert, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	srv := dashboard.NewServer(dashboard.Deps{
		Health: func(context.Context) health.Report { return health.Report{Status: "ok"} },
		Pool:   pool, Queue: run.JobQueue{Inserter: insert}, Addr: ts.Listener.Addr().String(), Seal: key,
	})
	session := signIn(t, pool, key, ts.Listener.Addr().String())
	ts.Config.Handler = srv.Handler()
	ts.Start()
	defer ts.Close()
	id := newAction(t, pool)
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	for _, tt := range []struct {
		method, path, host string
		want               int
	}{
		{"GET", "/api/approvals", "evil.example:" + port, http.StatusMisdirectedRequest},
		{"GET", "/api/health", "evil.example:" + port, http.StatusMisdirectedRequest},
		{"POST", "/api/approvals/" + id + "/approve", "evil.example:" + port, http.StatusMisdirectedRequest},
		{"GET", "/api/approvals", "localhost:" + port, http.StatusOK},
		{"GET", "/api/approvals", "127.0.0.1:" + port, http.StatusOK},
	} {
		req, _ := http.NewRequest(tt.method, ts.URL+tt.path, strings.NewReader("{}"))
		req.Host = tt.host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://"+tt.host)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.AddCookie(&http.Cookie{Name: "buddi_session_" + port, Value: session})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s with Host %s: %d, want %d", tt.method, tt.path, tt.host, resp.StatusCode, tt.want)
		}
	}
	if rec, _ := action.Get(context.Background(), pool, id); rec.Approval.State != action.Pending {
		t.Errorf("a rebinding page decided the action: %s", rec.Approval.State)
	}
}
