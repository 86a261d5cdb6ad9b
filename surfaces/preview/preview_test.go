package preview_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/seal/sealtest"
	"buddi/internal/pgtest"
	"buddi/surfaces/preview"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(serveAsChild(mode))
	}
	pgtest.Main(m)
}

// upstream is a dev server on loopback in this process: a page with an absolute asset, an
// echo websocket, and a record of the cookies and paths it was sent.
type upstream struct {
	srv     *httptest.Server
	port    int
	cookies chan string
	hosts   chan string // "Host Origin" of each page request
}

func newUpstream(t testing.TB) *upstream {
	u := &upstream{cookies: make(chan string, 100), hosts: make(chan string, 100)}
	up := websocket.Upgrader{}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			kind, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			_ = c.WriteMessage(kind, msg)
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		select {
		case u.cookies <- r.URL.Path + " " + r.Header.Get("Cookie"):
		default:
		}
		select {
		case u.hosts <- r.Host + " " + r.Header.Get("Origin"):
		default:
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Add("Set-Cookie", "buddi_session_4317=stolen; Path=/")
		w.Header().Add("Set-Cookie", "theme=dark; Path=/")
		fmt.Fprint(w, `<html><script src="/assets/app.js"></script><p>hello preview</p></html>`)
	})
	u.srv = httptest.NewServer(mux)
	t.Cleanup(u.srv.Close)
	u.port = u.srv.Listener.Addr().(*net.TCPAddr).Port
	return u
}

type fixture struct {
	up      *upstream
	prev    *httptest.Server
	srv     *preview.Server
	pool    *pgxpool.Pool
	port    int
	targets map[string]preview.Target
}

func newFixture(t testing.TB) *fixture { return newFixtureResolving(t, nil) }

// newFixtureResolving is newFixture with resolve in place of the fixture's own targets,
// when it is not nil.
func newFixtureResolving(t testing.TB, resolve preview.Resolver) *fixture {
	f := &fixture{up: newUpstream(t)}
	f.targets = map[string]preview.Target{
		"web":      {Port: f.up.port, Pid: os.Getpid()},
		"low":      {Port: 80, Pid: os.Getpid()},
		"postgres": {Port: 5432, Pid: os.Getpid()},
		"liar":     {Port: f.up.port, Pid: 1}, // says it listens where another process does
	}
	pool := pgtest.Pool(t)
	if resolve == nil {
		resolve = func(_ context.Context, plugin, name string) (preview.Target, error) {
			if t, ok := f.targets[name]; ok && plugin == "developer" {
				return t, nil
			}
			return preview.Target{}, preview.ErrUnknown
		}
	}
	f.pool = pool
	f.srv = preview.New(preview.Deps{Pool: pool, Seal: sealtest.Key(t), Resolve: resolve})
	f.prev = httptest.NewServer(f.srv.Handler())
	t.Cleanup(f.prev.Close)
	f.port = f.prev.Listener.Addr().(*net.TCPAddr).Port
	return f
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// open redeems a link and returns the preview's cookie.
func (f *fixture) open(t testing.TB, name string) *http.Cookie {
	t.Helper()
	link, err := f.srv.Link(context.Background(), "127.0.0.1", f.port, "developer", name)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := noRedirect.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/preview/developer/"+name+"/" {
		t.Fatalf("redeem: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, c := range resp.Cookies() {
		if c.Name == preview.CookieName {
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/preview/developer/"+name+"/" || c.MaxAge != 24*3600 {
				t.Fatalf("cookie %+v", c)
			}
			return c
		}
	}
	t.Fatal("no preview cookie")
	return nil
}

func get(t testing.TB, url string, cookies ...*http.Cookie) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestPreviewThroughATicket(t *testing.T) {
	f := newFixture(t)
	base := f.prev.URL + "/preview/developer/web/"
	if code, body := get(t, base); code != http.StatusUnauthorized || body != "" {
		t.Fatalf("without a cookie: %d %q, want a bodyless 401", code, body)
	}
	cookie := f.open(t, "web")
	// The dashboard's cookies reach this origin too (same host): none may reach the app.
	code, body := get(t, base+"page?x=1", cookie, &http.Cookie{Name: "buddi_session_4317", Value: "s"}, &http.Cookie{Name: "app", Value: "1"})
	if code != http.StatusOK || !strings.Contains(body, "hello preview") {
		t.Fatalf("through the proxy: %d %q", code, body)
	}
	resp, err := noRedirect.Do(func() *http.Request {
		req, _ := http.NewRequest("GET", base, nil)
		req.AddCookie(cookie)
		return req
	}())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Values("Set-Cookie"); len(got) != 1 || !strings.HasPrefix(got[0], "theme=") {
		t.Fatalf("cookies the app set, as passed on: %q", got)
	}
	if seen := <-f.up.cookies; seen != "/page app=1" {
		t.Fatalf("the app saw %q, want its own path and cookie only", seen)
	}
	if c := f.srv.CheckPreview(context.Background(), "developer", "web"); !c.OK || !c.AbsoluteAssets {
		t.Fatalf("check: %+v", c)
	}
	// The cookie opens this preview only.
	if code, _ := get(t, f.prev.URL+"/preview/developer/other/", cookie); code != http.StatusUnauthorized {
		t.Fatalf("another preview with this cookie: %d", code)
	}
	// A ticket works once.
	link, _ := f.srv.Link(context.Background(), "127.0.0.1", f.port, "developer", "web")
	if code, _ := get(t, link); code != http.StatusSeeOther {
		t.Fatalf("first use: %d", code)
	}
	if code, body := get(t, link); code != http.StatusUnauthorized || body != "" {
		t.Fatalf("second use: %d %q", code, body)
	}
	// Websockets from the preview's own page are proxied.
	hdr := http.Header{"Cookie": {cookie.Name + "=" + cookie.Value}, "Origin": {f.prev.URL}}
	ws, _, err := websocket.DefaultDialer.Dial(strings.Replace(base, "http://", "ws://", 1)+"ws", hdr)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.WriteMessage(websocket.TextMessage, []byte("hot reload")); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := ws.ReadMessage(); err != nil || string(msg) != "hot reload" {
		t.Fatalf("websocket echo: %q %v", msg, err)
	}
	if _, _, err := websocket.DefaultDialer.Dial(strings.Replace(base, "http://", "ws://", 1)+"ws", nil); err == nil {
		t.Fatal("a websocket without the cookie was let through")
	}
}

func TestPreviewPortsAreChecked(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{"low", "postgres", "liar"} {
		if _, err := f.srv.Link(context.Background(), "127.0.0.1", f.port, "developer", name); err == nil {
			t.Errorf("%s: a link was issued", name)
		}
		if c := f.srv.CheckPreview(context.Background(), "developer", name); c.OK {
			t.Errorf("%s: check %+v", name, c)
		}
	}
	if _, err := f.srv.Link(context.Background(), "127.0.0.1", f.port, "developer", "ghost"); err == nil {
		t.Error("a link for no process")
	}
	// A process that stops listening after the link was opened is refused on the next request.
	cookie := f.open(t, "web")
	f.targets["web"] = preview.Target{Port: f.up.port, Pid: 1}
	if code, _ := get(t, f.prev.URL+"/preview/developer/web/", cookie); code != http.StatusBadGateway {
		t.Fatalf("after the port changed hands: %d", code)
	}
}

// A preview at the root of its own origin (a tailnet port of its own): the app is addressed as
// on loopback (Host, and its own page's Origin), a request with a foreign Origin (another
// page's fetch, which the caller's identity would ride on) does not reach it, buddi's cookies
// stay out, and a process that moved to another port is not reached through the old one.
func TestRootAddressesTheAppAsOnLoopback(t *testing.T) {
	f := newFixture(t)
	root := httptest.NewServer(f.srv.Root("developer", "web", f.up.port))
	t.Cleanup(root.Close)
	local := fmt.Sprintf("127.0.0.1:%d", f.up.port)
	send := func(origin string) (int, string, string, string) {
		req, _ := http.NewRequest(http.MethodGet, root.URL+"/", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Cookie", "buddi_session_80=secret; theme=dark")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body), <-f.up.hosts, <-f.up.cookies
	}
	code, body, hosts, cookies := send(root.URL)
	if code != http.StatusOK || !strings.Contains(body, "hello preview") {
		t.Fatalf("the page: %d %s", code, body)
	}
	if hosts != local+" http://"+local {
		t.Fatalf("the app was addressed as %q, want %q", hosts, local+" http://"+local)
	}
	if cookies != "/ theme=dark" {
		t.Fatalf("the app got cookies %q", cookies)
	}
	req, _ := http.NewRequest(http.MethodGet, root.URL+"/", nil)
	req.Header.Set("Origin", "http://elsewhere.example")
	if code, _ := do(t, req); code != http.StatusForbidden || len(f.up.hosts) != 0 {
		t.Fatalf("a foreign Origin: %d, the app reached %d times", code, len(f.up.hosts))
	}
	moved := httptest.NewServer(f.srv.Root("developer", "web", f.up.port+1))
	t.Cleanup(moved.Close)
	if code, body := get(t, moved.URL+"/"); code != http.StatusBadGateway || !strings.Contains(body, "now listens on port") {
		t.Fatalf("the old port of a moved process: %d %s", code, body)
	}
}

// Shutdown closes the websockets the preview listener relays, which the HTTP server itself
// no longer tracks once they are upgraded.
func TestShutdownClosesRelayedWebsockets(t *testing.T) {
	f := newFixture(t)
	cookie := f.open(t, "web")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- f.srv.Serve(l) }()
	url := "ws://" + l.Addr().String() + "/preview/developer/web/ws"
	ws, _, err := websocket.DefaultDialer.Dial(url, http.Header{"Cookie": {cookie.Name + "=" + cookie.Value}, "Origin": {"http://" + l.Addr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.WriteMessage(websocket.TextMessage, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := ws.ReadMessage(); err != nil || string(msg) != "ping" {
		t.Fatalf("echo before the shutdown: %q %v", msg, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err = ws.ReadMessage()
	if ne, ok := err.(net.Error); err == nil || ok && ne.Timeout() {
		t.Fatalf("the relayed websocket outlived the shutdown: %v", err)
	}
}
