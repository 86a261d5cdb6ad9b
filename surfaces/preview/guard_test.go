package preview_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"buddi/surfaces/preview"
)

// An app's Set-Cookie never sets one of buddi's cookies: not by name, and not by a nameless
// cookie, which a browser sends back as its bare value (so "=buddi_session_4317=x" comes back
// as the cookie buddi_session_4317). Its own cookies pass.
func TestAppSetsNoneOfBuddisCookies(t *testing.T) {
	jar := []string{
		"=buddi_session_4317=forged; Path=/",     // nameless: comes back as buddi_session_4317=forged
		"buddi_csrf_4317; Path=/",                // no "=": nameless too
		"=; Path=/",                              // nameless and empty
		" \tbuddi_session_4317=x; Path=/api",     // buddi's name behind white space
		"buddi_preview=x; Path=/preview/",        // buddi's name, another path
		"Buddi_Session_4317=x; Domain=127.0.0.1", // buddi's name in other letters
		"lang=en; Path=/",
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for _, c := range jar {
			w.Header().Add("Set-Cookie", c)
		}
		fmt.Fprint(w, "cookies")
	}))
	t.Cleanup(up.Close)
	f := newFixture(t)
	f.targets["jar"] = preview.Target{Port: portOf(t, up), Pid: f.targets["web"].Pid}
	cookie := f.open(t, "jar")
	check := func(where, url string, cookies ...*http.Cookie) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Values("Set-Cookie"); resp.StatusCode != http.StatusOK || len(got) != 1 || got[0] != "lang=en; Path=/" {
			t.Fatalf("%s: %d, the app's Set-Cookie passed on: %q, want only lang=en", where, resp.StatusCode, got)
		}
	}
	check("the preview listener", f.prev.URL+"/preview/developer/jar/", cookie)
	root := httptest.NewServer(f.srv.Root("developer", "jar", portOf(t, up)))
	t.Cleanup(root.Close)
	check("the root", root.URL+"/")
}

// A page can add a cookie named buddi_preview on a narrower path (its own script shares the
// cookie jar), which the browser then sends first: every buddi_preview cookie is tried.
func TestEveryPreviewCookieIsTried(t *testing.T) {
	f := newFixture(t)
	cookie := f.open(t, "web")
	req, _ := http.NewRequest(http.MethodGet, f.prev.URL+"/preview/developer/web/page", nil)
	req.Header.Set("Cookie", "buddi_preview=forged; buddi_preview=also-forged; "+cookie.Name+"="+cookie.Value)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "hello preview") {
		t.Fatalf("with the valid cookie behind two others: %d %q", resp.StatusCode, body)
	}
	req.Header.Set("Cookie", "buddi_preview=forged; buddi_preview=also-forged")
	if code, _ := do(t, req); code != http.StatusUnauthorized {
		t.Fatalf("with forged cookies only: %d", code)
	}
}

// The preview cookie is SameSite=Lax, which a page on another port of the same host still
// gets sent with its requests (ports do not make sites): a write (every method but GET, HEAD
// and OPTIONS, and a websocket) needs a request the preview's own page made, by
// Sec-Fetch-Site, or, where browsers do not send that (plain HTTP off loopback), by Origin.
// A write that says neither is refused. A read comes from the preview's own page or is a
// navigation (a link followed, the dashboard's frame).
func TestPreviewWritesComeFromItsOwnPages(t *testing.T) {
	f := newFixture(t)
	cookie := f.open(t, "web")
	own := f.prev.URL
	cases := []struct {
		method, site, origin string
		want                 int
		mode                 string
	}{
		{http.MethodPost, "", "", http.StatusForbidden, "cors"},                                // says nothing: not a browser's write
		{http.MethodPost, "same-site", own, http.StatusForbidden, "cors"},                      // a page on another port
		{http.MethodPost, "cross-site", "", http.StatusForbidden, "navigate"},                  // another site
		{http.MethodPost, "", "http://127.0.0.1:1", http.StatusForbidden, "cors"},              // plain HTTP, another origin
		{http.MethodPost, "", "null", http.StatusForbidden, "cors"},                            // a sandboxed or redirected page
		{http.MethodDelete, "same-origin", "http://127.0.0.1:1", http.StatusForbidden, "cors"}, // the headers disagree
		{http.MethodPost, "same-origin", own, http.StatusOK, "cors"},
		{http.MethodPut, "", own, http.StatusOK, "cors"}, // plain HTTP: Origin alone
		{http.MethodPost, "none", "", http.StatusOK, "navigate"},
		{http.MethodGet, "cross-site", "", http.StatusOK, "navigate"},                     // a link followed to the preview
		{http.MethodGet, "same-site", "", http.StatusOK, "navigate"},                      // the dashboard framing it
		{http.MethodGet, "same-site", "http://127.0.0.1:1", http.StatusForbidden, "cors"}, // another port's page reading it
		{http.MethodGet, "", "http://127.0.0.1:1", http.StatusForbidden, ""},
		{http.MethodGet, "same-site", "", http.StatusForbidden, "no-cors"}, // another port's image or script
		{http.MethodOptions, "same-site", "http://127.0.0.1:1", http.StatusForbidden, "cors"},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, own+"/preview/developer/web/api", strings.NewReader("{}"))
		req.AddCookie(cookie)
		if c.site != "" {
			req.Header.Set("Sec-Fetch-Site", c.site)
			req.Header.Set("Sec-Fetch-Mode", c.mode)
		}
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s site=%q mode=%q origin=%q: %d %q, want %d", c.method, c.site, c.mode, c.origin, resp.StatusCode, body, c.want)
		}
	}
	ws := strings.Replace(own, "http://", "ws://", 1) + "/preview/developer/web/ws"
	for origin, ok := range map[string]bool{"": false, "http://127.0.0.1:1": false, own: true} {
		hdr := http.Header{"Cookie": {cookie.Name + "=" + cookie.Value}}
		if origin != "" {
			hdr.Set("Origin", origin)
		}
		c, _, err := websocket.DefaultDialer.Dial(ws, hdr)
		if err == nil {
			c.Close()
		}
		if (err == nil) != ok {
			t.Errorf("a websocket with Origin %q: %v, want opened %v", origin, err, ok)
		}
	}
}

// portOf is the loopback port a test server listens on.
func portOf(t testing.TB, s *httptest.Server) int {
	t.Helper()
	return s.Listener.Addr().(*net.TCPAddr).Port
}

// do sends req without following redirects and returns the status and the body.
func do(t testing.TB, req *http.Request) (int, string) {
	t.Helper()
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
