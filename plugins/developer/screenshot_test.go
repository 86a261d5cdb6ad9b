package developer

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"buddi/core/seal/sealtest"
	"buddi/internal/pgtest"
	"buddi/plugins/developer/runlist"
	"buddi/plugins/developer/shot"
	"buddi/surfaces/preview"
)

// serverPreviews answers developer.preview and the screenshot's port check from a real
// preview server, as buddi serve wires it.
type serverPreviews struct{ srv *preview.Server }

func (p serverPreviews) Check(ctx context.Context, name string) (bool, bool, string) {
	c := p.srv.CheckPreview(ctx, Name, name)
	return c.OK, c.AbsoluteAssets, c.Problem
}

// counted is a server on loopback that counts the requests it gets: buddi's dashboard, or
// another local service, standing by for a screenshot to reach it.
func counted(t *testing.T, body string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// freePort is a loopback port no one listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitListening polls port until something accepts on it, with a deadline.
func waitListening(t *testing.T, port int) {
	t.Helper()
	pgtest.Eventually(t, fmt.Sprintf("something to listen on %d", port), func() bool {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// appServer is the agent's dev server: "/" frames, embeds and fetches the other server,
// "/away" redirects to it, "/later" navigates to it from a script.
const appServer = `import http.server, sys
port, other = int(sys.argv[1]), sys.argv[2]
pages = {
    "/": '<!doctype html><h1>hello screenshot</h1><iframe src="%s/api/session"></iframe><img src="%s/logo.png"><script>fetch("%s/api/approvals").catch(() => {})</script>' % (other, other, other),
    "/later": '<!doctype html><script>location.href = "%s/api/session"</script>' % other,
}
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/away":
            self.send_response(302)
            self.send_header("Location", other + "/api/session")
            self.end_headers()
            return
        body = pages.get(self.path, "not here").encode()
        self.send_response(200 if self.path in pages else 404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
`

// developer.screenshot reaches the port the process itself listens on and nothing else,
// through real headless Chromium, with the port checked by a real preview server: a process
// that declared a port another server holds (buddi's dashboard, another local service) gets
// no picture of it, nor does one on a port of buddi's own; and a page on the process's own
// port that frames, embeds, fetches, redirects or navigates to another loopback port reaches
// none of it.
func TestScreenshotReachesOnlyTheProcessesOwnSocket(t *testing.T) {
	if _, err := shot.Find(); err != nil {
		t.Fatal(err)
	}
	dash, dashHits := counted(t, `{"approvals": "the owner's"}`)
	other, otherHits := counted(t, `{"service": "another"}`)
	dashPort, otherPort := dash.Listener.Addr().(*net.TCPAddr).Port, other.Listener.Addr().(*net.TCPAddr).Port
	ownPort := freePort(t) // a port buddi would listen on
	host := &localHost{}
	store := &fakeArtifacts{}
	b := setup(t, withHost(host), func(d *Deps) {
		devStore := NewStore(d.Pool, d.Seal, nil)
		srv := preview.New(preview.Deps{Pool: d.Pool, Seal: sealtest.Key(t), Refused: []int{dashPort, ownPort},
			Resolve: func(ctx context.Context, plugin, name string) (preview.Target, error) {
				p, err := devStore.RunningProcess(ctx, name)
				if err != nil || p.Port == nil {
					return preview.Target{}, preview.ErrUnknown
				}
				return preview.Target{Port: *p.Port, Pid: p.Pid}, nil
			}})
		d.Previews, d.Screenshots, d.Artifacts = serverPreviews{srv}, shot.Chromium{}, store
	})
	t.Cleanup(func() { _ = host.StopAll(context.Background(), agent) })
	b.setMode(t, runlist.ModeRun)
	writeFile(t, b.ws+"/server.py", appServer)
	start := func(name, command string, port int) {
		t.Helper()
		c := call("start", args(t, map[string]any{"name": name, "command": command, "port": port}))
		b.mustRun(t, c, b.mustDescribe(t, c))
	}
	// Each port is one the kernel gave out free (liarPort+1 was a guess, and another test
	// could hold it: the second liar then never listened).
	webPort, liarPort, liar2Port := freePort(t), freePort(t), freePort(t)
	start("web", fmt.Sprintf("python3 server.py %d %s", webPort, dash.URL), webPort)
	// Two processes that listen, but not on the port they declared, and one on buddi's own.
	start("liar", fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1", liarPort), dashPort)
	start("liar2", fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1", liar2Port), otherPort)
	start("mine", fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1", ownPort), ownPort)
	for _, p := range []int{webPort, liarPort, liar2Port, ownPort} {
		waitListening(t, p)
	}

	for name, want := range map[string]string{"liar": "belongs to buddi", "liar2": "not listening on port", "mine": "belongs to buddi"} {
		out := b.run(t, call("screenshot", `{"name":"`+name+`"}`), nil)
		if !out.Result.IsError || !strings.Contains(out.Result.Text, want) {
			t.Errorf("%s: %+v, want a refusal saying %q", name, out.Result, want)
		}
	}
	if len(store.kept) != 0 || dashHits.Load() != 0 || otherHits.Load() != 0 {
		t.Fatalf("a screenshot through a declared port: %d kept, the dashboard asked %d times, the other service %d",
			len(store.kept), dashHits.Load(), otherHits.Load())
	}

	// The page itself is captured; what it asks of the dashboard's port is refused, and said.
	out := b.run(t, call("screenshot", `{"name":"web"}`), nil)
	if out.Result.IsError || len(store.kept) != 1 || !bytes.HasPrefix(store.kept[0].data, []byte("\x89PNG")) {
		t.Fatalf("the page: %+v, kept %d", out.Result, len(store.kept))
	}
	if !strings.Contains(out.Result.Text, dash.URL+"/api/session") {
		t.Errorf("the refused frame is not reported: %s", out.Result.Text)
	}
	// A redirect to the dashboard captures nothing.
	out = b.run(t, call("screenshot", `{"name":"web","path":"/away"}`), nil)
	if !out.Result.IsError || !strings.Contains(out.Result.Text, "off its own origin") || len(store.kept) != 1 {
		t.Errorf("a redirect to another port: %+v, kept %d", out.Result, len(store.kept))
	}
	// A navigation by the page's script reaches nothing either (the picture may be of the
	// page before it, or nothing).
	_ = b.run(t, call("screenshot", `{"name":"web","path":"/later"}`), nil)
	if n := dashHits.Load(); n != 0 {
		t.Fatalf("the screenshot's browser reached the dashboard's port %d times", n)
	}
}

// v6onlyServer serves a page on [::]:PORT with IPV6_V6ONLY set: it does not cover 127.0.0.1.
const v6onlyServer = `import http.server, socket, sys
class Server(http.server.HTTPServer):
    address_family = socket.AF_INET6
    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        super().server_bind()
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<!doctype html><h1>hello from [::]</h1>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
Server(("::", int(sys.argv[1])), Handler).serve_forever()
`

// A process on [::]:PORT, IPv6-only, does not own 127.0.0.1:PORT, which another server holds
// here: the screenshot goes to the process's own socket, at [::1], and never to the other.
func TestScreenshotOfAnIPv6OnlySocket(t *testing.T) {
	if _, err := shot.Find(); err != nil {
		t.Fatal(err)
	}
	host := &localHost{}
	store := &fakeArtifacts{}
	b := setup(t, withHost(host), func(d *Deps) {
		devStore := NewStore(d.Pool, d.Seal, nil)
		srv := preview.New(preview.Deps{Pool: d.Pool, Seal: sealtest.Key(t),
			Resolve: func(ctx context.Context, plugin, name string) (preview.Target, error) {
				p, err := devStore.RunningProcess(ctx, name)
				if err != nil || p.Port == nil {
					return preview.Target{}, preview.ErrUnknown
				}
				return preview.Target{Port: *p.Port, Pid: p.Pid}, nil
			}})
		d.Previews, d.Screenshots, d.Artifacts = serverPreviews{srv}, shot.Chromium{}, store
	})
	t.Cleanup(func() { _ = host.StopAll(context.Background(), agent) })
	b.setMode(t, runlist.ModeRun)
	writeFile(t, b.ws+"/v6.py", v6onlyServer)
	port := freePort(t)
	c := call("start", args(t, map[string]any{"name": "v6", "command": fmt.Sprintf("python3 v6.py %d", port), "port": port}))
	b.mustRun(t, c, b.mustDescribe(t, c))
	pgtest.Eventually(t, "the process to listen on [::1]", func() bool {
		conn, err := net.Dial("tcp6", net.JoinHostPort("::1", strconv.Itoa(port)))
		if err == nil {
			conn.Close()
		}
		return err == nil
	})
	l, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("127.0.0.1:%d beside the process's IPv6-only socket: %v", port, err)
	}
	var hits atomic.Int64
	other := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, `{"approvals": "the owner's"}`)
	})}
	go func() { _ = other.Serve(l) }()
	t.Cleanup(func() { _ = other.Close() })

	out := b.run(t, call("screenshot", `{"name":"v6"}`), nil)
	if out.Result.IsError || len(store.kept) != 1 || !bytes.HasPrefix(store.kept[0].data, []byte("\x89PNG")) {
		t.Fatalf("the screenshot: %+v, kept %d", out.Result, len(store.kept))
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server on 127.0.0.1:%d was asked %d times", port, n)
	}
}
