package dashboard_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/action"
	"buddi/core/artifact"
	"buddi/core/seal"
	"buddi/core/seal/sealtest"
	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/plugins/memory"
	"buddi/queue"
	"buddi/runtime/run"
	"buddi/scheduler"
	"buddi/sentinels"
	"buddi/surfaces/dashboard"
	"buddi/surfaces/telegram"
	"buddi/surfaces/webauth"
)

// accessBundle is a dashboard with every route, on a real listener, and its key and token.
type accessBundle struct {
	ts    *httptest.Server
	srv   *dashboard.Server
	pool  *pgxpool.Pool
	key   seal.Key
	token string // the command line's bearer token
}

func setupAccess(t *testing.T) accessBundle {
	t.Helper()
	pool := pgtest.Pool(t)
	insert, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	b := accessBundle{pool: pool, key: key, token: "cli-token-0123456789abcdefghijklmnopqrstuvwxyz"}
	b.srv = dashboard.NewServer(dashboard.Deps{Pool: pool, Queue: run.JobQueue{Inserter: insert}, Chat: &dashboard.Chat{}, Developer: nopDeveloper{}, Jobs: nopJobs{},
		Seal: b.key, CLIToken: b.token,
		Health: func(context.Context) health.Report { return health.Report{Status: "ok"} },
		Watch: &dashboard.Watch{
			Reminders: func(ctx context.Context, all bool) ([]scheduler.Reminder, error) {
				return scheduler.Reminders(ctx, pool, "", all)
			},
			CancelReminder: func(ctx context.Context, id int64) error { return scheduler.CancelReminder(ctx, pool, id) },
			Sentinels:      &sentinels.Engine{Pool: pool}},
		Phone:  &dashboard.Phone{Telegram: &telegram.Store{Pool: pool, Key: b.key}},
		Memory: memoryOver{memory.NewStore(pool)}, Files: artifact.NewStore(pool, t.TempDir()), WebFetches: &fetchRows{}})
	b.ts = httptest.NewServer(b.srv.Handler())
	t.Cleanup(b.ts.Close)
	return b
}

// fetchRows is a WebFetches with no rows.
type fetchRows struct{}

func (fetchRows) Recent(context.Context, string, int) ([]dashboard.WebFetch, error) { return nil, nil }

// fill puts test values into a route's pattern.
func fill(path string) string {
	return strings.NewReplacer("{id}", "00000000-0000-4000-8000-000000000000", "{agent}", "developer", "{name}", "web",
		"{plugin}", "developer").Replace(path)
}

// Every write route refuses a request without the CSRF token, with a wrong one, without an
// Origin, and with a foreign Origin, before its handler runs, even from a signed-in browser.
func TestEveryWriteRouteChecksCSRFAndOrigin(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	signIn(t, b.pool, b.key, b.ts.Listener.Addr().String())
	routes := b.srv.WriteRoutes()
	if len(routes) < 10 {
		t.Fatalf("only %d write routes registered: %v", len(routes), routes)
	}
	for _, route := range routes {
		method, path, _ := strings.Cut(route, " ")
		cases := map[string]map[string]string{
			"no CSRF token":  {dashboard.CSRFHeader: ""},
			"a wrong token":  {dashboard.CSRFHeader: strings.Repeat("x", 43)},
			"no Origin":      {"Origin": ""},
			"foreign Origin": {"Origin": "https://evil.example"},
		}
		for name, header := range cases {
			header["Content-Type"] = "application/json"
			if code, body := do(t, method, b.ts.URL+fill(path), header, `{}`); code != http.StatusForbidden {
				t.Errorf("%s with %s: %d %v, want 403", route, name, code, body)
			}
		}
	}
}

// Loopback is not a credential: every route, reads and websockets included, answers a
// request with no session and no bearer token with a 401, even one that carries a CSRF
// token it made up and buddi's own Origin, as a local process can; the session call hands
// out no CSRF cookie; and the refusal is recorded.
func TestEveryRouteNeedsTheOwnersCredential(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	id := newAction(t, b.pool)
	routes := b.srv.Routes()
	if len(routes) < 25 {
		t.Fatalf("only %d routes registered: %v", len(routes), routes)
	}
	for _, route := range routes {
		method, path, _ := strings.Cut(route, " ")
		path = strings.Replace(fill(path), "00000000-0000-4000-8000-000000000000", id, 1)
		req, _ := http.NewRequest(method, b.ts.URL+path, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", b.ts.URL)
		req.Header.Set(dashboard.CSRFHeader, testCSRF)
		req.AddCookie(&http.Cookie{Name: "buddi_csrf_" + req.URL.Port(), Value: testCSRF})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s with no credential: %d, want 401", route, resp.StatusCode)
		}
		if path == "/api/session" && len(resp.Cookies()) > 0 {
			t.Errorf("GET /api/session handed a stranger cookies: %v", resp.Cookies())
		}
	}
	// Websockets: the handshake is refused before any upgrade.
	for _, path := range []string{"/api/live", "/api/conversations/" + id + "/live"} {
		ws, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(b.ts.URL, "http")+path, nil)
		if err == nil {
			ws.Close()
			t.Errorf("websocket %s opened with no credential", path)
		} else if resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("websocket %s with no credential: %v, want a 401", path, err)
		}
	}
	if rec, _ := action.Get(context.Background(), b.pool, id); rec.Approval.State != action.Pending {
		t.Errorf("a request with no credential decided the action: %s", rec.Approval.State)
	}
	var n int
	var uid *int
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*), max((payload->>'uid')::int) FROM core.events WHERE kind = 'dashboard.refused'`).Scan(&n, &uid); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no dashboard.refused event was recorded")
	}
	if n > 3 {
		t.Errorf("%d dashboard.refused events for one caller within a minute: want them folded", n)
	}
	if uid == nil || *uid != os.Getuid() {
		t.Errorf("the refusal names uid %v, want this process's %d", uid, os.Getuid())
	}
}

// The sign-in: a ticket works once, within five minutes, on loopback as off it; its cookie
// is HttpOnly and named for the port; the browser then reads, writes and watches.
func TestSignIn(t *testing.T) {
	t.Parallel()
	for _, remote := range []bool{false, true} {
		t.Run(fmt.Sprintf("remote=%v", remote), func(t *testing.T) {
			t.Parallel()
			pool := pgtest.Pool(t)
			key := sealtest.Key(t)
			srv := dashboard.NewServer(dashboard.Deps{Pool: pool, Remote: remote, Seal: key, Health: func(context.Context) health.Report { return health.Report{Status: "ok"} }})
			ts := httptest.NewServer(srv.Handler())
			t.Cleanup(ts.Close)
			if code, _ := do(t, "GET", ts.URL+"/api/health", nil, ""); code != http.StatusUnauthorized {
				t.Fatalf("without a session: %d, want 401", code)
			}
			ticket, err := webauth.Issue(context.Background(), pool, key, webauth.PurposeSession, "")
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
				if c.Name == "buddi_session_"+ts.URL[strings.LastIndex(ts.URL, ":")+1:] {
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
			// The page's own websocket, with the session and its Origin.
			h := http.Header{"Origin": {ts.URL}, "Cookie": {session.Name + "=" + session.Value}}
			ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/api/live", h)
			if err != nil {
				t.Fatalf("the page's own websocket: %v", err)
			}
			ws.Close()
			resp, err = client.Get(ts.URL + "/auth?ticket=" + ticket)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("a ticket used twice: %d, want 401", resp.StatusCode)
			}
		})
	}
}

// Whoever can write the database cannot sign in: a ticket or a session row they insert for
// a token they chose (hashed as buddi stores hashes without the key) opens nothing.
func TestForgedTicketsAndSessionsOpenNothing(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	token := "forged-token-0123456789abcdefghijklmnopqrstuvw"
	sum := sha256.Sum256([]byte(token))
	for _, table := range []string{"core.web_tickets", "core.web_sessions"} {
		if _, err := b.pool.Exec(context.Background(), `INSERT INTO `+table+` (token_hash, purpose, subject, expires_at)
			VALUES ($1, 'session', '', now() + interval '1 hour')`, hex.EncodeToString(sum[:])); err != nil {
			t.Fatal(err)
		}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(b.ts.URL + "/auth?ticket=" + token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a forged ticket: %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", b.ts.URL+"/api/approvals", nil)
	req.AddCookie(&http.Cookie{Name: "buddi_session_" + req.URL.Port(), Value: token})
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a forged session: %d, want 401", resp.StatusCode)
	}
}

// The command line's bearer token opens every route, writes included, with no cookie,
// Origin or CSRF token (a browser cannot send that header across sites); a wrong one is a 401.
func TestBearerToken(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	id := newAction(t, b.pool)
	call := func(method, path, token string) int {
		req, _ := http.NewRequest(method, b.ts.URL+path, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := call("GET", "/api/approvals", b.token+"x"); code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d, want 401", code)
	}
	if code := call("POST", "/api/approvals/"+id+"/approve", "not-the-token"); code != http.StatusUnauthorized {
		t.Errorf("a wrong token's write: %d, want 401", code)
	}
	if code := call("GET", "/api/approvals", b.token); code != http.StatusOK {
		t.Errorf("the token's read: %d, want 200", code)
	}
	if code := call("POST", "/api/approvals/"+id+"/approve", b.token); code != http.StatusOK {
		t.Errorf("the token's write: %d, want 200", code)
	}
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(b.ts.URL, "http")+"/api/live", http.Header{"Authorization": {"Bearer " + b.token}})
	if err != nil {
		t.Fatalf("the terminal's websocket with the token: %v", err)
	}
	ws.Close()
}

// A signed-in browser's cookie does not let another site's page open a websocket: the
// handshake needs buddi's own Origin.
func TestSocketsNeedTheOwnOrigin(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	session := signIn(t, b.pool, b.key, b.ts.Listener.Addr().String())
	cookie := "buddi_session_" + b.ts.URL[strings.LastIndex(b.ts.URL, ":")+1:] + "=" + session
	for name, origin := range map[string]string{"no Origin": "", "another site": "https://evil.example", "another port": "http://127.0.0.1:1"} {
		h := http.Header{"Cookie": {cookie}}
		if origin != "" {
			h.Set("Origin", origin)
		}
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(b.ts.URL, "http")+"/api/live", h)
		if err == nil {
			ws.Close()
			t.Errorf("%s: the websocket opened with the owner's cookie", name)
		}
	}
}

// A process of another local account (uid 65534) that reaches the dashboard on loopback gets
// a 401 on every step of the attack that worked before (fetch the CSRF cookie, approve), and
// the refusal names its uid.
func TestAnotherLocalAccountIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("switching to another account needs root; run as root to cover it")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv is not installed")
	}
	t.Parallel()
	b := setupAccess(t)
	id := newAction(t, b.pool)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary must be reachable by uid 65534: copy it out of a private temp dir.
	dir, err := os.MkdirTemp("/tmp", "buddi-stranger-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := dir + "/stranger"
	if out, err := exec.Command("cp", self, bin).CombinedOutput(); err != nil {
		t.Fatalf("copy the test binary: %v %s", err, out)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-test.run=^$")
	cmd.Env = []string{"DASHBOARD_TEST_STRANGER=" + b.ts.URL + "|" + id}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the stranger's attack did not run: %v\n%s", err, out)
	}
	if want := "session 401\napprove 401\n"; string(out) != want {
		t.Errorf("the stranger got:\n%swant:\n%s", out, want)
	}
	if rec, _ := action.Get(context.Background(), b.pool, id); rec.Approval.State != action.Pending {
		t.Errorf("another account decided the owner's action: %s", rec.Approval.State)
	}
	var n int
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM core.events WHERE kind = 'dashboard.refused' AND (payload->>'uid')::int = 65534`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("no dashboard.refused event names uid 65534")
	}
}

// stranger is the attack of another local account, run by the test binary under setpriv:
// fetch /api/session for a CSRF cookie, then approve with it. It prints each status.
func stranger(spec string) {
	base, id, _ := strings.Cut(spec, "|")
	jar := map[string]string{}
	resp, err := http.Get(base + "/api/session")
	if err != nil {
		fmt.Println("session", err)
		return
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		jar[c.Name] = c.Value
	}
	fmt.Println("session", resp.StatusCode)
	req, _ := http.NewRequest("POST", base+"/api/approvals/"+id+"/approve", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", base)
	csrf := testCSRF
	for name, v := range jar {
		if strings.HasPrefix(name, "buddi_csrf_") {
			csrf = v
		}
	}
	req.Header.Set(dashboard.CSRFHeader, csrf)
	req.AddCookie(&http.Cookie{Name: "buddi_csrf_" + req.URL.Port(), Value: csrf})
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println("approve", err)
		return
	}
	resp.Body.Close()
	fmt.Println("approve", resp.StatusCode)
}

type nopDeveloper struct{}

func (nopDeveloper) Settings(context.Context) (dashboard.DeveloperSettings, error) {
	return dashboard.DeveloperSettings{}, nil
}
func (nopDeveloper) SetMode(context.Context, string, string) error     { return nil }
func (nopDeveloper) StopProcess(context.Context, string, string) error { return nil }
func (nopDeveloper) StopAll(context.Context) (int, error)              { return 0, nil }
func (nopDeveloper) Forget(context.Context, int64) error               { return nil }
func (nopDeveloper) SetTailnetPreviews(context.Context, bool) error    { return nil }

type nopJobs struct{}

func (nopJobs) Failed(context.Context, bool) (dashboard.FailedJobs, error) {
	return dashboard.FailedJobs{}, nil
}
func (nopJobs) Retry(context.Context, int64) error   { return nil }
func (nopJobs) Dismiss(context.Context, int64) error { return nil }

func (nopJobs) Cancel(context.Context, int64) (string, error) { return "cancelled", nil }
