package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/queue"
	"buddi/surfaces/dashboard"
	"buddi/surfaces/webauth"
)

// Every write route refuses a request without the CSRF token, with a wrong one, without an
// Origin, and with a foreign Origin, before its handler runs.
func TestEveryWriteRouteChecksCSRFAndOrigin(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	insert, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	srv := dashboard.NewServer(dashboard.Deps{Pool: pool, Insert: insert, Chat: &dashboard.Chat{}, Developer: nopDeveloper{}, Jobs: nopJobs{},
		Health: func(context.Context) health.Report { return health.Report{} }})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	routes := srv.WriteRoutes()
	if len(routes) < 10 {
		t.Fatalf("only %d write routes registered: %v", len(routes), routes)
	}
	for _, route := range routes {
		method, path, _ := strings.Cut(route, " ")
		path = strings.NewReplacer("{id}", "00000000-0000-4000-8000-000000000000", "{agent}", "developer", "{name}", "web").Replace(path)
		cases := map[string]map[string]string{
			"no CSRF token":  {dashboard.CSRFHeader: ""},
			"a wrong token":  {dashboard.CSRFHeader: strings.Repeat("x", 43)},
			"no Origin":      {"Origin": ""},
			"foreign Origin": {"Origin": "https://evil.example"},
		}
		for name, header := range cases {
			header["Content-Type"] = "application/json"
			if code, body := do(t, method, ts.URL+path, header, `{}`); code != http.StatusForbidden {
				t.Errorf("%s with %s: %d %v, want 403", route, name, code, body)
			}
		}
	}
}

// Off loopback every request needs a session; a ticket works once, within five minutes, and
// its cookie is HttpOnly and named for the port.
func TestRemoteSignIn(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	srv := dashboard.NewServer(dashboard.Deps{Pool: pool, Remote: true, Health: func(context.Context) health.Report { return health.Report{Status: "ok"} }})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	if code, _ := do(t, "GET", ts.URL+"/api/health", nil, ""); code != http.StatusUnauthorized {
		t.Fatalf("without a session: %d, want 401", code)
	}
	ticket, err := webauth.Issue(context.Background(), pool, webauth.PurposeSession, "")
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(ts.URL + "/auth?ticket=" + ticket)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("redeem: %d", resp.StatusCode)
	}
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "buddi_session_"+strings.Split(ts.Listener.Addr().String(), ":")[1] {
			session = c
		}
	}
	if session == nil || !session.HttpOnly {
		t.Fatalf("session cookie: %+v in %v", session, resp.Cookies())
	}
	req, _ := http.NewRequest("GET", ts.URL+"/api/health", nil)
	req.AddCookie(session)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("with the session: %d", resp.StatusCode)
	}
	resp, err = client.Get(ts.URL + "/auth?ticket=" + ticket)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a ticket used twice: %d, want 401", resp.StatusCode)
	}
}

type nopDeveloper struct{}

func (nopDeveloper) Settings(context.Context) (any, error)             { return map[string]any{}, nil }
func (nopDeveloper) SetMode(context.Context, string, string) error     { return nil }
func (nopDeveloper) StopProcess(context.Context, string, string) error { return nil }
func (nopDeveloper) StopAll(context.Context) (int, error)              { return 0, nil }
func (nopDeveloper) Forget(context.Context, int64) error               { return nil }
func (nopDeveloper) SetTailnetPreviews(context.Context, bool) error    { return nil }

type nopJobs struct{}

func (nopJobs) Failed(context.Context, bool) (any, error) { return map[string]any{}, nil }
func (nopJobs) Retry(context.Context, int64) error        { return nil }
func (nopJobs) Dismiss(context.Context, int64) error      { return nil }
