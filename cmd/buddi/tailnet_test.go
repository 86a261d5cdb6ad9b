package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"tailscale.com/tsnet"
	"tailscale.com/tstest/integration/testcontrol"

	"buddi/health"
	"buddi/tailnet/tailnettest"
)

// tailnetBrowser is a browser on a tailnet node: the node's own dialer and a cookie jar.
func tailnetBrowser(n *tsnet.Server) *http.Client {
	c := *n.HTTPClient()
	jar, _ := cookiejar.New(nil)
	c.Jar = jar
	c.Timeout = 10 * time.Second
	return &c
}

// tailnetDo sends a request over the tailnet, retrying while the path between the nodes is
// set up (the first packets over DERP can be dropped), and returns the status and body.
func tailnetDo(t testing.TB, c *http.Client, method, u string, header http.Header, body string) (int, string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		req, _ := http.NewRequest(method, u, strings.NewReader(body))
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := c.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode, string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: %v", method, u, err)
		}
		time.Sleep(50 * time.Millisecond) // a retry interval, not a wait for a signal
	}
}

// tailnetWrite posts JSON as the dashboard's page does: buddi's Origin and the CSRF token from
// the cookie the jar holds.
func tailnetWrite(t *testing.T, c *http.Client, base, path, body string) (int, string) {
	t.Helper()
	u, _ := url.Parse(base)
	token := ""
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "buddi_csrf_80" {
			token = ck.Value
		}
	}
	if token == "" {
		t.Fatalf("no CSRF cookie for %s", base)
	}
	return tailnetDo(t, c, http.MethodPost, base+path, http.Header{"Origin": {base}, "X-Buddi-Csrf": {token},
		"Content-Type": {"application/json"}}, body)
}

// The tailnet end to end, on an offline tailnet (tailscale's control server and DERP in this
// process): buddi serve with the tailnet on; the owner's phone pins its login with a sign-in
// link, then loads the dashboard with no ticket; a stranger's laptop gets 403s and events;
// Settings → Developer's switch gives a dev server its own tailnet port, which the phone loads
// and which closes when the process stops.
func TestTailnetDashboardAndPreviews(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ctl := tailnettest.StartControl(t)
	model, s, vars, home := scriptedServeWith(t, []string{"TS_CONTROL_URL=" + ctl.URL, "BUDDI_TAILNET_HTTPS=off"}, func(vars []string) {
		if code, out, errOut := runBuddi(t, vars, time.Minute, "tailnet", "on"); code != 0 {
			t.Fatalf("tailnet on: %d %s%s", code, out, errOut)
		}
	})
	var tn *health.Tailnet
	waitFor(t, "the tailnet node to run", 2*time.Minute, func() bool {
		rep, err := s.fetchHealth()
		if err == nil && rep.Tailnet != nil && rep.Tailnet.State == "running" {
			tn = rep.Tailnet
		}
		return tn != nil
	})
	if tn.DNSName != "buddi."+tailnettest.Domain || len(tn.IPs) == 0 || tn.URL != "http://"+tn.DNSName+"/" {
		t.Fatalf("the node in health: %+v", tn)
	}
	code, out, _ := runBuddi(t, vars, time.Minute, "doctor")
	if !strings.Contains(out, "tailnet") || !strings.Contains(out, "owner's tailnet login is not set") {
		t.Fatalf("doctor (%d) does not say the owner's login is missing:\n%s", code, out)
	}

	phone := tailnettest.Node(t, ctx, ctl.URL, "phone")
	laptop := tailnettest.Node(t, ctx, ctl.URL, "laptop")
	owner, stranger := tailnettest.Login(t, ctx, phone), tailnettest.Login(t, ctx, laptop)
	base := "http://" + tn.DNSName

	// Before an owner login is set, the phone is refused like anyone.
	ph := tailnetBrowser(phone)
	if code, body := tailnetDo(t, ph, http.MethodGet, base+"/", nil, ""); code != http.StatusForbidden || !strings.Contains(body, "buddi tailnet owner") {
		t.Fatalf("before an owner login: %d %s", code, body)
	}

	// A sign-in link opened on the phone pins its login.
	code, out, errOut := runBuddi(t, vars, time.Minute, "dashboard", "--tailnet", "--json")
	var link struct{ URL string }
	if code != 0 || json.Unmarshal([]byte(out), &link) != nil || !strings.HasPrefix(link.URL, base+"/auth?ticket=") {
		t.Fatalf("dashboard --tailnet: %d %s %s", code, out, errOut)
	}
	if code, body := tailnetDo(t, ph, http.MethodGet, link.URL, nil, ""); code != http.StatusOK || !strings.Contains(body, "<title>") {
		t.Fatalf("the sign-in link: %d %s", code, body)
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "tailnet", "status", "--json")
	var status struct {
		Owner string
		Node  *health.Tailnet
	}
	if code != 0 || json.Unmarshal([]byte(out), &status) != nil || status.Owner != owner || status.Node == nil || status.Node.State != "running" {
		t.Fatalf("tailnet status after the link: %d %s (owner want %s)", code, out, owner)
	}

	// A fresh browser on the phone: the dashboard opens with no ticket.
	fresh := tailnetBrowser(phone)
	if code, body := tailnetDo(t, fresh, http.MethodGet, base+"/", nil, ""); code != http.StatusOK || !strings.Contains(body, "<title>") {
		t.Fatalf("the dashboard on the phone: %d %s", code, body)
	}
	if code, body := tailnetDo(t, fresh, http.MethodGet, base+"/api/session", nil, ""); code != http.StatusOK || !strings.Contains(strings.ReplaceAll(body, " ", ""), `"remote":true`) {
		t.Fatalf("the session on the phone: %d %s", code, body)
	}
	// Writes still need buddi's Origin and the CSRF token.
	if code, _ := tailnetDo(t, fresh, http.MethodPost, base+"/api/developer/tailnet", http.Header{"Content-Type": {"application/json"}}, `{"previews":true}`); code != http.StatusForbidden {
		t.Fatalf("a write without the CSRF token: %d", code)
	}
	if code, body := tailnetWrite(t, fresh, base, "/api/developer/tailnet", `{"previews":true}`); code != http.StatusOK {
		t.Fatalf("Settings → Developer's switch from the phone: %d %s", code, body)
	}

	// A stranger gets 403s, and the refusal is recorded.
	if code, _ := tailnetDo(t, tailnetBrowser(laptop), http.MethodGet, base+"/", nil, ""); code != http.StatusForbidden {
		t.Fatalf("the stranger: %d", code)
	}
	conn := dbConn(t, home)
	var refused int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM core.events WHERE kind = 'tailnet.refused' AND payload->>'login' = $1`, stranger).Scan(&refused); err != nil || refused == 0 {
		t.Fatalf("no tailnet.refused event for %s (%v)", stranger, err)
	}

	// The agent starts a dev server; with the switch on it gets its port on the tailnet.
	port := startDevServer(t, model, vars)
	waitFor(t, "the dev server's tailnet port", time.Minute, func() bool {
		rep, err := s.fetchHealth()
		return err == nil && rep.Tailnet != nil && len(rep.Tailnet.Ports) == 1 && rep.Tailnet.Ports[0].Port == port
	})
	appURL := fmt.Sprintf("%s:%d/", base, port)
	if code, body := tailnetDo(t, ph, http.MethodGet, appURL, nil, ""); code != http.StatusOK || !strings.Contains(body, "Hello from the dev server") {
		t.Fatalf("the preview on its tailnet port: %d %s", code, body)
	}
	if code, _ := tailnetDo(t, tailnetBrowser(laptop), http.MethodGet, appURL, nil, ""); code != http.StatusForbidden {
		t.Fatalf("the preview for the stranger: %d", code)
	}
	// The preview through buddi's own proxy works over the tailnet too.
	code, body := tailnetDo(t, fresh, http.MethodGet, base+"/api/preview/developer/web/link", nil, "")
	var plink struct{ URL string }
	if code != http.StatusOK || json.Unmarshal([]byte(body), &plink) != nil || !strings.HasPrefix(plink.URL, base+":") {
		t.Fatalf("the preview link on the tailnet: %d %s", code, body)
	}
	if code, body := tailnetDo(t, fresh, http.MethodGet, plink.URL, nil, ""); code != http.StatusOK || !strings.Contains(body, "Hello from the dev server") {
		t.Fatalf("the proxied preview over the tailnet: %d %s", code, body)
	}

	if !tailnettest.Answers(ctx, phone, net.JoinHostPort(tn.IPs[0], fmt.Sprint(port))) {
		t.Fatal("the process's tailnet port does not answer a raw request")
	}
	// Settings → Developer on the phone shows the switch on and the process; stopping the
	// process there closes its tailnet port.
	code, body = tailnetDo(t, fresh, http.MethodGet, base+"/api/developer", nil, "")
	var dev struct {
		Processes []struct{ Agent, Name string }
		Tailnet   struct {
			Previews, Node bool
			Sentence       string
		}
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &dev) != nil || len(dev.Processes) != 1 || !dev.Tailnet.Previews || !dev.Tailnet.Node ||
		!strings.Contains(dev.Tailnet.Sentence, "no one else") {
		t.Fatalf("Settings → Developer on the phone: %d %s", code, body)
	}
	if code, body := tailnetWrite(t, fresh, base, "/api/developer/processes/"+url.PathEscape(dev.Processes[0].Agent)+"/web/stop", `{}`); code != http.StatusOK {
		t.Fatalf("stop the process from the phone: %d %s", code, body)
	}
	waitFor(t, "the tailnet port to close", time.Minute, func() bool {
		rep, err := s.fetchHealth()
		return err == nil && rep.Tailnet != nil && len(rep.Tailnet.Ports) == 0
	})
	if tailnettest.Answers(ctx, phone, net.JoinHostPort(tn.IPs[0], fmt.Sprint(port))) {
		t.Fatal("the stopped process's tailnet port still answers")
	}
}

// When the node cannot come up, buddi says what is wrong: a login is needed (with the login
// URL, in the log, health and doctor), or the auth key was refused. The dashboard on loopback
// works all the while.
func TestTailnetFailuresAreNamed(t *testing.T) {
	ctl := tailnettest.StartControl(t, func(s *testcontrol.Server) { s.RequireAuth = true })
	home, port, vars := env(t, "TS_CONTROL_URL="+ctl.URL, "BUDDI_TAILNET_HTTPS=off")
	s := startServeArgs(t, home, port, vars, "serve", "--tailnet")
	var tn *health.Tailnet
	waitFor(t, "the node to ask for a login", time.Minute, func() bool {
		rep, err := s.fetchHealth()
		if err == nil && rep.Tailnet != nil && rep.Tailnet.LoginURL != "" {
			tn = rep.Tailnet
		}
		return tn != nil
	})
	if tn.State != "needs-login" || !strings.HasPrefix(tn.LoginURL, ctl.URL+"/auth/") || !strings.Contains(tn.Problem, tn.LoginURL) {
		t.Fatalf("a node that needs a login: %+v", tn)
	}
	waitFor(t, "the login URL in the log", 10*time.Second, func() bool { return strings.Contains(s.log.String(), tn.LoginURL) })
	code, out, _ := runBuddi(t, vars, time.Minute, "doctor")
	if code == 0 || !strings.Contains(out, tn.LoginURL) {
		t.Fatalf("doctor (%d) does not give the login URL:\n%s", code, out)
	}
	if s.stop() != 0 {
		t.Fatal("buddi serve did not stop cleanly")
	}

	// A second control server, which wants an auth key.
	keyed := tailnettest.StartControl(t, func(s *testcontrol.Server) { s.RequireAuthKey = "tskey-auth-good" })
	home, port, vars = env(t, "TS_CONTROL_URL="+keyed.URL, "TS_AUTHKEY=tskey-auth-wrong", "BUDDI_TAILNET_HTTPS=off")
	s = startServeArgs(t, home, port, vars, "serve", "--tailnet")
	tn = nil
	waitFor(t, "the node to report the refused key", time.Minute, func() bool {
		rep, err := s.fetchHealth()
		if err == nil && rep.Tailnet != nil && rep.Tailnet.Error != "" {
			tn = rep.Tailnet
		}
		return tn != nil
	})
	if !strings.Contains(tn.Problem, "auth key was refused") || !strings.Contains(tn.Problem, "set a valid one in TS_AUTHKEY") {
		t.Fatalf("a refused auth key: %+v", tn)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "tailnet", "owner", "not a login"); code != 2 || !strings.Contains(errOut+out, "not a tailnet login") {
		t.Fatalf("tailnet owner with a bad login: %d %s%s", code, out, errOut)
	}
	// The owner's login and the previews switch from the command line.
	if code, out, errOut := runBuddi(t, vars, time.Minute, "tailnet", "owner", "You@example.com"); code != 0 {
		t.Fatalf("tailnet owner: %d %s%s", code, out, errOut)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "tailnet", "previews", "on"); code != 0 {
		t.Fatalf("tailnet previews on: %d %s%s", code, out, errOut)
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "tailnet", "status", "--json")
	var status struct {
		Enabled, Previews, Serving bool
		Owner, Problem             string
	}
	if code != 0 || json.Unmarshal([]byte(out), &status) != nil || status.Owner != "You@example.com" || !status.Previews || status.Enabled ||
		!status.Serving || !strings.Contains(status.Problem, "auth key") {
		t.Fatalf("tailnet status: %d %s", code, out)
	}
	// Whoever can write the database names another owner: it is nobody's, and status says so.
	if _, err := dbConn(t, home).Exec(context.Background(), `UPDATE core.system_flags SET value = '{"login":"mallory@evil.example","how":"command"}' WHERE key = 'tailnet_owner'`); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "tailnet", "status", "--json")
	var forged struct{ Owner, Refused string }
	if code != 0 || json.Unmarshal([]byte(out), &forged) != nil || forged.Owner != "" || forged.Refused != "mallory@evil.example" {
		t.Fatalf("tailnet status with a forged owner: %d %s", code, out)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "tailnet", "status"); code != 0 || !strings.Contains(out, "not sealed") {
		t.Fatalf("tailnet status with a forged owner: %d %s", code, out)
	}
	if code, out, errOut := runBuddi(t, append(vars, "BUDDI_TAILNET_HOSTNAME=Not_A_Label"), time.Minute, "serve", "--tailnet"); code != 2 || !strings.Contains(errOut, "not a DNS label") {
		t.Fatalf("serve with a bad tailnet hostname: %d %s%s", code, out, errOut)
	}
}
