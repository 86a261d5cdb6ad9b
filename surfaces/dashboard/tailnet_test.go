package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/queue"
	"buddi/surfaces/dashboard"
	"buddi/surfaces/webauth"
	"buddi/tailnet"
)

// The dashboard's tailnet gate, with the node's WhoIs played by a table of remote addresses:
// the Host must be the node's; a caller WhoIs cannot place is refused; before an owner login is
// set only a valid ticket gets through, and it pins the caller's login; the owner's GET opens a
// session, the owner's write without one is refused; a ticket cannot displace the owner.
func TestTailnetGate(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	insert, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	callers := map[string]tailnet.Caller{
		"100.64.0.2:1000": {Login: "owner@example.com", Node: "phone"},
		"100.64.0.3:1000": {Login: "other@example.com", Node: "laptop"},
		"100.64.0.4:1000": {Login: "tagged-devices", Node: "ci", Tagged: true},
	}
	who := func(_ context.Context, addr string) (tailnet.Caller, error) {
		if c, ok := callers[addr]; ok {
			return c, nil
		}
		return tailnet.Caller{}, errors.New("no such peer")
	}
	gate := tailnet.NewGate(who, func() []string { return []string{"buddi", "buddi.example.ts.net"} }, pool, nil)
	srv := dashboard.NewServer(dashboard.Deps{Pool: pool, Insert: insert, Developer: nopDeveloper{}, Jobs: nopJobs{},
		Health:  func(context.Context) health.Report { return health.Report{} },
		Tailnet: &dashboard.Tailnet{Gate: gate}})
	h := srv.Handler()
	do := func(method, path, from string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "http://buddi.example.ts.net"+path, strings.NewReader("{}"))
		req.RemoteAddr = from
		for _, c := range cookies {
			req.AddCookie(c)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	owner, other, unknown := "100.64.0.2:1000", "100.64.0.3:1000", "100.64.0.9:1000"

	// Another name in Host is refused before anything else.
	req := httptest.NewRequest(http.MethodGet, "http://evil.example/", nil)
	req.RemoteAddr = owner
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMisdirectedRequest {
		t.Fatalf("a foreign Host: %d", rec.Code)
	}
	if rec := do(http.MethodGet, "/", unknown); rec.Code != http.StatusForbidden {
		t.Fatalf("an unidentified caller: %d", rec.Code)
	}
	// No owner yet: refused, and a bad ticket pins nothing.
	if rec := do(http.MethodGet, "/", owner); rec.Code != http.StatusForbidden {
		t.Fatalf("before an owner: %d", rec.Code)
	}
	if rec := do(http.MethodGet, "/auth?ticket=nope", other); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "used or has expired") {
		t.Fatalf("a bad ticket: %d %s", rec.Code, rec.Body)
	}
	if o, _ := tailnet.Owner(context.Background(), pool); o != "" {
		t.Fatalf("a bad ticket pinned %q", o)
	}
	// A tagged machine acts for no user: its valid ticket pins nothing, and is not spent.
	ticket, err := webauth.Issue(context.Background(), pool, webauth.PurposeSession, "")
	if err != nil {
		t.Fatal(err)
	}
	if rec := do(http.MethodGet, "/auth?ticket="+ticket, "100.64.0.4:1000"); rec.Code != http.StatusForbidden {
		t.Fatalf("a tagged machine's ticket: %d", rec.Code)
	}
	if o, _ := tailnet.Owner(context.Background(), pool); o != "" {
		t.Fatalf("a tagged machine pinned %q", o)
	}
	// A valid ticket pins the caller's login and opens its session.
	rec = do(http.MethodGet, "/auth?ticket="+ticket, owner)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("redeeming the ticket: %d %s", rec.Code, rec.Body)
	}
	if o, _ := tailnet.Owner(context.Background(), pool); o != "owner@example.com" {
		t.Fatalf("the pinned owner: %q", o)
	}
	if rec := do(http.MethodGet, "/", "100.64.0.4:1000"); rec.Code != http.StatusForbidden {
		t.Fatalf("a tagged machine after the owner is set: %d", rec.Code)
	}
	var session *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == "buddi_session_80" {
			session = c
		}
	}
	if session == nil || !session.HttpOnly {
		t.Fatalf("no HttpOnly session cookie after redeeming: %v", rec.Result().Cookies())
	}
	// A second ticket, redeemed by someone else, changes nothing.
	ticket2, _ := webauth.Issue(context.Background(), pool, webauth.PurposeSession, "")
	if rec := do(http.MethodGet, "/auth?ticket="+ticket2, other); rec.Code != http.StatusForbidden {
		t.Fatalf("a second login's ticket: %d", rec.Code)
	}
	// A request another site makes the owner's browser send (an image) opens no session.
	var before, after int
	_ = pool.QueryRow(context.Background(), `SELECT count(*) FROM core.web_sessions`).Scan(&before)
	req = httptest.NewRequest(http.MethodGet, "http://buddi.example.ts.net/", nil)
	req.RemoteAddr = owner
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	_ = pool.QueryRow(context.Background(), `SELECT count(*) FROM core.web_sessions`).Scan(&after)
	if rec.Code != http.StatusUnauthorized || after != before {
		t.Fatalf("a cross-site request: %d, sessions %d → %d", rec.Code, before, after)
	}
	// The owner's first GET opens a session; a write without a session is refused even with
	// the CSRF token right; with the session it reaches the route's own checks.
	rec = do(http.MethodGet, "/api/session", owner)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"remote": true`) {
		t.Fatalf("the owner's session: %d %s", rec.Code, rec.Body)
	}
	csrf := &http.Cookie{Name: "buddi_csrf_80", Value: strings.Repeat("c", 43)}
	write := func(cookies ...*http.Cookie) int {
		req := httptest.NewRequest(http.MethodPost, "http://buddi.example.ts.net/api/developer/tailnet", strings.NewReader(`{"previews":true}`))
		req.RemoteAddr = owner
		req.Header.Set("Origin", "http://buddi.example.ts.net")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(dashboard.CSRFHeader, csrf.Value)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := write(csrf); code != http.StatusUnauthorized {
		t.Fatalf("a write without a session: %d", code)
	}
	if code := write(csrf, session); code != http.StatusOK {
		t.Fatalf("a write with the session: %d", code)
	}
	// The other login is refused, session cookie or not, and it is recorded.
	if rec := do(http.MethodGet, "/", other, session); rec.Code != http.StatusForbidden {
		t.Fatalf("another login with the owner's cookie: %d", rec.Code)
	}
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM core.events WHERE kind = 'tailnet.refused' AND payload->>'login' = 'other@example.com'`).Scan(&n); err != nil || n == 0 {
		t.Fatalf("refusals of the other login recorded: %d %v", n, err)
	}
}
