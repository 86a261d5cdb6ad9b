package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"buddi/core/seal/sealtest"
	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/queue"
	"buddi/runtime/run"
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
	key := sealtest.Key(t)
	gate := tailnet.NewGate(who, func() []string { return []string{"buddi", "buddi.example.ts.net"} }, pool, key, nil)
	srv := dashboard.NewServer(dashboard.Deps{Pool: pool, Seal: key, Queue: run.JobQueue{Inserter: insert}, Developer: nopDeveloper{}, Jobs: nopJobs{},
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
	if o, _ := tailnet.Owner(context.Background(), pool, key); o != "" {
		t.Fatalf("a bad ticket pinned %q", o)
	}
	// A sign-in ticket for the loopback dashboard (the one buddi serve logs) pins nothing on
	// the tailnet.
	local, err := webauth.Issue(context.Background(), pool, key, webauth.PurposeSession, "")
	if err != nil {
		t.Fatal(err)
	}
	if rec := do(http.MethodGet, "/auth?ticket="+local, other); rec.Code != http.StatusForbidden {
		t.Fatalf("a loopback ticket on the tailnet: %d", rec.Code)
	}
	if o, _ := tailnet.Owner(context.Background(), pool, key); o != "" {
		t.Fatalf("a loopback ticket pinned %q", o)
	}
	// A tagged machine acts for no user: its valid ticket pins nothing, and is not spent.
	ticket, err := webauth.Issue(context.Background(), pool, key, webauth.PurposeSession, webauth.SubjectTailnet)
	if err != nil {
		t.Fatal(err)
	}
	if rec := do(http.MethodGet, "/auth?ticket="+ticket, "100.64.0.4:1000"); rec.Code != http.StatusForbidden {
		t.Fatalf("a tagged machine's ticket: %d", rec.Code)
	}
	if o, _ := tailnet.Owner(context.Background(), pool, key); o != "" {
		t.Fatalf("a tagged machine pinned %q", o)
	}
	// A valid ticket pins the caller's login and opens its session.
	rec = do(http.MethodGet, "/auth?ticket="+ticket, owner)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("redeeming the ticket: %d %s", rec.Code, rec.Body)
	}
	if o, _ := tailnet.Owner(context.Background(), pool, key); o != "owner@example.com" {
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
	ticket2, _ := webauth.Issue(context.Background(), pool, key, webauth.PurposeSession, webauth.SubjectTailnet)
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
	if rec.Code != http.StatusForbidden || after != before {
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

// On the tailnet the owner's identity rides on every request the owner's browser makes, so a
// write (every method but GET, HEAD and OPTIONS) and a websocket need a request the dashboard's
// own page made: Sec-Fetch-Site same-origin (or none), or, over plain HTTP where browsers send
// no Sec-Fetch-Site, an Origin naming the dashboard. One that says neither, or names another
// page, is refused at the gate, before a session is opened for it. Served on a real loopback
// listener, the node's WhoIs played by the loopback address.
func TestTailnetWritesComeFromTheDashboardsOwnPage(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	insert, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	key := sealtest.Key(t)
	if err := tailnet.SetOwner(context.Background(), pool, key, "owner@example.com"); err != nil {
		t.Fatal(err)
	}
	who := func(context.Context, string) (tailnet.Caller, error) {
		return tailnet.Caller{Login: "owner@example.com", Node: "phone"}, nil
	}
	gate := tailnet.NewGate(who, func() []string { return []string{"127.0.0.1"} }, pool, key, nil)
	srv := dashboard.NewServer(dashboard.Deps{Pool: pool, Seal: key, Queue: run.JobQueue{Inserter: insert}, Developer: nopDeveloper{}, Jobs: nopJobs{},
		Health:  func(context.Context) health.Report { return health.Report{} },
		Tailnet: &dashboard.Tailnet{Gate: gate}})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	own := ts.URL
	sessions := func() int {
		var n int
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM core.web_sessions`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Websockets: one that says nothing of its page, and one from another page, are refused
	// and open no session; the dashboard's own page (plain HTTP: Origin only) gets through.
	live := strings.Replace(own, "http://", "ws://", 1) + "/api/live"
	for _, origin := range []string{"", "http://evil.example", "null"} {
		before := sessions()
		hdr := http.Header{}
		if origin != "" {
			hdr.Set("Origin", origin)
		}
		c, resp, err := websocket.DefaultDialer.Dial(live, hdr)
		if err == nil {
			c.Close()
		}
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden || sessions() != before {
			t.Fatalf("a websocket with Origin %q: %v %v, sessions %d → %d", origin, resp, err, before, sessions())
		}
	}
	c, _, err := websocket.DefaultDialer.Dial(live, http.Header{"Origin": {own}})
	if err != nil {
		t.Fatalf("the dashboard's own websocket over plain HTTP: %v", err)
	}
	c.Close()

	// Writes, with the session and the CSRF token right: only the dashboard's own page's.
	resp, err := http.Get(own + "/api/session")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if strings.HasPrefix(c.Name, "buddi_session_") {
			session = c
		}
	}
	if session == nil {
		t.Fatalf("no session from the owner's first GET: %d %v", resp.StatusCode, resp.Cookies())
	}
	port := strings.TrimPrefix(own, "http://127.0.0.1:")
	csrf := &http.Cookie{Name: "buddi_csrf_" + port, Value: strings.Repeat("c", 43)}
	cases := []struct {
		site, origin string
		want         int
	}{
		{"", "", http.StatusForbidden},
		{"", "http://evil.example", http.StatusForbidden},
		{"same-site", own, http.StatusForbidden},
		{"cross-site", "http://evil.example", http.StatusForbidden},
		{"", own, http.StatusOK}, // plain HTTP: a browser sends Origin, not Sec-Fetch-Site
		{"same-origin", own, http.StatusOK},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodPost, own+"/api/developer/tailnet", strings.NewReader(`{"previews":true}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(dashboard.CSRFHeader, csrf.Value)
		req.AddCookie(csrf)
		req.AddCookie(session)
		if c.site != "" {
			req.Header.Set("Sec-Fetch-Site", c.site)
		}
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("a write with Sec-Fetch-Site %q and Origin %q: %d, want %d", c.site, c.origin, resp.StatusCode, c.want)
		}
	}
}
