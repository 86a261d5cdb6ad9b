package tailnet_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/seal/sealtest"
	"buddi/internal/pgtest"
	"buddi/tailnet"
	"buddi/tailnet/tailnettest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// get fetches url through a node's own dialer, retrying while the path between the nodes is
// set up (the first packets over DERP can be dropped), and returns the status and body.
func get(t *testing.T, ctx context.Context, c *http.Client, url string) (int, string) {
	t.Helper()
	var last error
	for ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
		resp, err := c.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			cancel()
			return resp.StatusCode, string(body)
		}
		cancel()
		last = err
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond): // a retry interval, not a wait for a signal
		}
	}
	t.Fatalf("GET %s: %v", url, last)
	return 0, ""
}

func refusals(t *testing.T, pool *pgxpool.Pool, login string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM core.events WHERE kind = 'tailnet.refused' AND payload->>'login' = $1`, login).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// One buddi node, the owner's phone and a stranger's laptop on an offline tailnet: before an
// owner login is set everyone is refused; then the owner's login gets in and the stranger gets
// a 403 and an event; a route opens and closes its own port.
func TestOnlyTheOwnersLoginGetsIn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ctl := tailnettest.StartControl(t)
	pool := pgtest.Pool(t)
	key := sealtest.Key(t)

	node, err := tailnet.Start(tailnet.Config{Dir: t.TempDir(), ControlURL: ctl.URL, Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Close() })
	if err := node.WaitRunning(ctx); err != nil {
		t.Fatal(err)
	}
	st := node.Status()
	if st.State != tailnet.StateRunning || len(st.IPs) == 0 || st.DNSName != "buddi."+tailnettest.Domain || st.Problem() != "" {
		t.Fatalf("status: %+v", st)
	}
	phone := tailnettest.Node(t, ctx, ctl.URL, "phone")
	laptop := tailnettest.Node(t, ctx, ctl.URL, "laptop")
	owner, stranger := tailnettest.Login(t, ctx, phone), tailnettest.Login(t, ctx, laptop)
	if owner == stranger {
		t.Fatalf("the phone and the laptop share the login %s", owner)
	}

	gate := tailnet.NewGate(node.WhoIs, node.Names, pool, key, nil)
	l, err := node.Listen(8080)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: gate.OwnerOnly("test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello owner")
	}))}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
	url := "http://" + st.DNSName + ":8080/"

	// No owner login yet: the owner's phone is refused too, and the refusal is recorded.
	if code, body := get(t, ctx, phone.HTTPClient(), url); code != http.StatusForbidden || !strings.Contains(body, "buddi tailnet owner") {
		t.Fatalf("before an owner is set: %d %s", code, body)
	}
	if refusals(t, pool, owner) != 1 {
		t.Fatalf("want one tailnet.refused event for %s", owner)
	}

	if err := tailnet.SetOwner(ctx, pool, key, owner); err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, ctx, phone.HTTPClient(), url); code != http.StatusOK || body != "hello owner" {
		t.Fatalf("the owner: %d %s", code, body)
	}
	for range 3 { // refused each time, recorded once a minute
		if code, _ := get(t, ctx, laptop.HTTPClient(), url); code != http.StatusForbidden {
			t.Fatalf("the stranger: %d", code)
		}
	}
	if n := refusals(t, pool, stranger); n != 1 {
		t.Fatalf("tailnet.refused events for the stranger: %d, want 1", n)
	}
	// The owner's own browser, sent by a page on another site that points its name at the
	// node, is refused: the Host is not the node's.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+st.IPs[0]+":8080/", nil)
	req.Host = "rebound.example:8080"
	if resp, err := phone.HTTPClient().Do(req); err != nil || resp.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("a foreign Host from the owner: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// A ticket redeemed later cannot take the owner's place.
	if got, err := tailnet.PinOwner(ctx, pool, key, stranger); err != nil || got != owner {
		t.Fatalf("PinOwner with an owner set: %q %v", got, err)
	}

	// A route opens its own port and closes it.
	routes := tailnet.NewRoutes(node.Listen, func(r tailnet.Route) http.Handler {
		return gate.OwnerOnly("preview "+r.Name, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, "app "+r.Name)
		}))
	}, nil)
	t.Cleanup(routes.Close)
	web := tailnet.Route{Plugin: "developer", Name: "web", Port: 9000}
	routes.Reconcile([]tailnet.Route{web})
	routeURL := "http://" + st.DNSName + ":9000/"
	if code, body := get(t, ctx, phone.HTTPClient(), routeURL); code != http.StatusOK || body != "app web" {
		t.Fatalf("the route: %d %s", code, body)
	}
	if code, _ := get(t, ctx, laptop.HTTPClient(), routeURL); code != http.StatusForbidden {
		t.Fatalf("the route for the stranger: %d", code)
	}
	routes.Reconcile(nil)
	if open := routes.Open(); len(open) != 0 {
		t.Fatalf("open after closing: %v", open)
	}
	if tailnettest.Answers(ctx, phone, st.IPs[0]+":9000") {
		t.Fatal("the closed route's port still answers")
	}
}

func TestValidLogin(t *testing.T) {
	for _, ok := range []string{"you@example.com", "octocat@github"} {
		if err := tailnet.ValidLogin(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "you", "you @example.com", "a@b\n"} {
		if err := tailnet.ValidLogin(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestStatusProblemNamesTheFix(t *testing.T) {
	cases := map[string]tailnet.Status{
		"https://login.example/a/1": {State: tailnet.StateNeedsLogin, LoginURL: "https://login.example/a/1"},
		"auth key":                  {State: tailnet.StateNeedsLogin, Error: "the auth key was refused (invalid key): set a valid one"},
		"approve":                   {State: tailnet.StateNeedsApproval},
	}
	for want, st := range cases {
		if p := st.Problem(); !strings.Contains(p, want) {
			t.Errorf("%+v: problem %q lacks %q", st, p, want)
		}
	}
	if p := (tailnet.Status{State: tailnet.StateRunning}).Problem(); p != "" {
		t.Errorf("running: %q", p)
	}
}

// Requests another site makes the owner's browser send do not reach an app on its tailnet
// port; its own pages and a top-level navigation do. A write (every method but GET, HEAD and
// OPTIONS, and a websocket) needs Sec-Fetch-Site same-origin or none, or, where a browser sends
// no Sec-Fetch-Site (plain HTTP to a tailnet name is not a secure origin), an Origin naming the
// app's own origin: a write that says neither is refused, the owner's identity being on it.
func TestOwnPagesOnly(t *testing.T) {
	srv := httptest.NewServer(tailnet.OwnPagesOnly(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "app") })))
	t.Cleanup(srv.Close)
	own := srv.URL
	cases := []struct {
		method, site, mode, origin string
		upgrade                    bool
		want                       int
	}{
		{http.MethodPost, "cross-site", "no-cors", "", false, http.StatusForbidden},
		{http.MethodGet, "cross-site", "no-cors", "", false, http.StatusForbidden},  // an image or a script
		{http.MethodPost, "same-site", "navigate", "", false, http.StatusForbidden}, // a form on another port
		{http.MethodGet, "cross-site", "navigate", "", false, http.StatusOK},        // a link the owner followed
		{http.MethodPost, "same-origin", "cors", own, false, http.StatusOK},
		{http.MethodGet, "none", "navigate", "", false, http.StatusOK},
		{http.MethodPost, "", "", "", false, http.StatusForbidden},                    // says nothing of where it came from
		{http.MethodPost, "", "", "http://evil.example", false, http.StatusForbidden}, // plain HTTP: a form on another site
		{http.MethodPatch, "", "", "null", false, http.StatusForbidden},               // a sandboxed page
		{http.MethodPost, "same-origin", "cors", "http://evil.example", false, http.StatusForbidden},
		{http.MethodPost, "", "", own, false, http.StatusOK},                        // plain HTTP: the app's own page
		{http.MethodGet, "", "", "", true, http.StatusForbidden},                    // a websocket that says nothing
		{http.MethodGet, "", "", "http://evil.example", true, http.StatusForbidden}, // another site's websocket
		{http.MethodGet, "same-site", "websocket", own, true, http.StatusForbidden}, // another port's websocket
		{http.MethodGet, "", "", own, true, http.StatusOK},                          // the app's own (plain HTTP)
		{http.MethodGet, "same-origin", "websocket", own, true, http.StatusOK},
		{http.MethodGet, "", "", "", false, http.StatusOK}, // a read from a client that is not a browser
		{http.MethodOptions, "", "", "", false, http.StatusOK},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, own+"/", nil)
		if c.site != "" {
			req.Header.Set("Sec-Fetch-Site", c.site)
			req.Header.Set("Sec-Fetch-Mode", c.mode)
		}
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		if c.upgrade {
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "websocket")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s/%s origin %q upgrade %v: %d %q, want %d", c.method, c.site, c.mode, c.origin, c.upgrade, resp.StatusCode, body, c.want)
		}
	}
}

func TestStartingTooLongIsAProblem(t *testing.T) {
	st := tailnet.Status{State: tailnet.StateStarting, Since: time.Now()}
	if p := st.Problem(); p != "" {
		t.Fatalf("a node just starting: %q", p)
	}
	st.Since = time.Now().Add(-time.Minute)
	if p := st.Problem(); !strings.Contains(p, "connecting for") || !strings.Contains(p, "TS_CONTROL_URL") {
		t.Fatalf("a node starting for a minute: %q", p)
	}
}

// The control server renames the node (as it does when another machine holds the name): the
// node's status and the Host check follow it without a restart, taking the new name and
// refusing the old one, which now names another machine.
func TestARenameReachesTheHostCheck(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctl := tailnettest.StartControl(t)
	node, err := tailnet.Start(tailnet.Config{Dir: t.TempDir(), ControlURL: ctl.URL, Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Close() })
	if err := node.WaitRunning(ctx); err != nil {
		t.Fatal(err)
	}
	gate := tailnet.NewGate(node.WhoIs, node.Names, nil, sealtest.Key(t), nil)
	hostOK := func(host string) bool {
		return gate.HostOK(httptest.NewRequest(http.MethodGet, "http://"+host+"/", nil))
	}
	oldName, newName := "buddi."+tailnettest.Domain, "desk."+tailnettest.Domain
	if !hostOK(oldName) || !hostOK("buddi") || hostOK(newName) {
		t.Fatalf("before the rename: names %v", node.Names())
	}

	nodes := ctl.Server.AllNodes()
	if len(nodes) != 1 {
		t.Fatalf("the control server knows %d nodes, want 1", len(nodes))
	}
	renamed := nodes[0]
	renamed.Name = newName + "."
	ctl.Server.UpdateNode(renamed)

	for {
		changed := node.Changed()
		if node.Status().DNSName == newName {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("the node did not follow its rename: status %+v", node.Status())
		}
	}
	st := node.Status()
	if st.State != tailnet.StateRunning || len(st.IPs) == 0 {
		t.Fatalf("after the rename: %+v", st)
	}
	for _, host := range []string{newName, newName + ":80", "desk", "DESK", st.IPs[0]} {
		if !hostOK(host) {
			t.Errorf("the new name's Host %q is refused: names %v", host, node.Names())
		}
	}
	for _, host := range []string{oldName, oldName + ":80", "buddi"} {
		if hostOK(host) {
			t.Errorf("the old name's Host %q is still taken: names %v", host, node.Names())
		}
	}
}
