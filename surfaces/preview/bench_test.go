package preview_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"buddi/actors"
	"buddi/internal/pgtest"
	"buddi/plugins/developer/spawn"
	"buddi/supervisor"
	"buddi/supervisor/proc"
	"buddi/surfaces/preview"
)

// BenchmarkProxyHTTP measures requests through the preview against the same requests to the
// dev server directly and through a plain httputil.ReverseProxy, in the same run: b.N
// requests each way from 8 concurrent clients with keep-alive. The dev server is a real
// process started as developer.start starts one and supervised by a real process host, and
// the preview resolves it as buddi serve does (HostResolver over the host's record), with
// every check a request gets. It reports requests per second of the three, the preview's
// throughput against the plain proxy (target ≥ 0.85) and its p50 and p99 against direct
// (target p99 ≤ 1.5), and the CPU time a request of each way takes, the clients' and the
// proxy's in this process and the dev server's in its own: with the clients always waiting,
// a way's latency is 8 divided by its throughput, which on 2 busy cores follows its CPU.
func BenchmarkProxyHTTP(b *testing.B) {
	ways, client := proxyWays(b)
	// The three take turns, a fifth of b.N each per round, so that a machine shared with
	// other work slows them alike.
	run := func(w *way, n int) {
		var mu sync.Mutex
		next := make(chan struct{}, n)
		for range n {
			next <- struct{}{}
		}
		close(next)
		start, cpu := time.Now(), cpuUsed(w.server)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range next {
					d, ok := w.get(b, client)
					if !ok {
						return
					}
					mu.Lock()
					w.lat = append(w.lat, d)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		w.took += time.Since(start)
		w.cpu += cpuUsed(w.server) - cpu
	}
	b.ResetTimer()
	const rounds = 5
	for i := range rounds {
		n := b.N / rounds
		if i == rounds-1 {
			n = b.N - n*(rounds-1)
		}
		for _, w := range ways {
			run(w, n)
		}
	}
	report(b, ways)
}

// BenchmarkProxyHTTPPaced measures latency at the same offered load each way: requests sent
// at a fixed rate (open loop, each on its own goroutine, so a slow answer does not hold back
// the next request), b.N each way per rate, the three taking turns as in BenchmarkProxyHTTP.
// In the closed loop of BenchmarkProxyHTTP, 8 clients always waiting, latency is 8 divided by
// the throughput (Little's law), so the proxy's p99 there says as much about its requests per
// second as about its tail; here the three carry the same load, below what any of them can
// carry on these 2 cores. Past what the machine can carry the requests pile up, each pile
// opens new connections, and the run measures that collapse, the same for the three ways.
func BenchmarkProxyHTTPPaced(b *testing.B) {
	ways, client := proxyWays(b)
	for _, rate := range []int{250, 500, 1000} {
		b.Run(strconv.Itoa(rate)+"/s", func(b *testing.B) {
			for _, w := range ways {
				w.lat, w.took, w.cpu = nil, 0, 0
			}
			every := time.Second / time.Duration(rate)
			run := func(w *way, n int) {
				var mu sync.Mutex
				var wg sync.WaitGroup
				start, cpu := time.Now(), cpuUsed(w.server)
				for i := range n {
					// Each request leaves at its own time, or at once when the sender is
					// late: the load offered stays the rate asked for.
					time.Sleep(time.Until(start.Add(time.Duration(i) * every)))
					wg.Go(func() {
						if d, ok := w.get(b, client); ok {
							mu.Lock()
							w.lat = append(w.lat, d)
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				w.took += time.Since(start)
				w.cpu += cpuUsed(w.server) - cpu
			}
			b.ResetTimer()
			const rounds = 5
			for i := range rounds {
				n := b.N / rounds
				if i == rounds-1 {
					n = b.N - n*(rounds-1)
				}
				for _, w := range ways {
					run(w, n)
				}
			}
			report(b, ways)
		})
	}
}

// way is one of the three ways to the dev server a benchmark measures, with what it measured.
type way struct {
	url        string
	withCookie bool
	cookie     *http.Cookie
	server     int // the dev server's pid
	lat        []time.Duration
	took       time.Duration
	cpu        time.Duration // the CPU time the benchmark's process and the dev server's took
}

// cpuUsed is the CPU time (user and system) this process (the clients and the proxies) and
// the dev server have used so far.
func cpuUsed(server int) time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	own := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	data, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(server), "stat"))
	_, rest, _ := strings.Cut(string(data), ") ")
	fields := strings.Fields(rest)
	if len(fields) < 13 {
		return own
	}
	utime, _ := strconv.Atoi(fields[11]) // clock ticks of 1/100 s
	stime, _ := strconv.Atoi(fields[12])
	return own + time.Duration(utime+stime)*10*time.Millisecond
}

// get makes one request and returns how long it took, or false (the benchmark failed).
func (w *way) get(b *testing.B, client *http.Client) (time.Duration, bool) {
	req, _ := http.NewRequest("GET", w.url, nil)
	if w.withCookie {
		req.AddCookie(w.cookie)
	}
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		b.Error(err)
		return 0, false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Errorf("%s: status %d", w.url, resp.StatusCode)
		return 0, false
	}
	return time.Since(t0), true
}

// proxyWays starts a dev server under a real process host, the preview resolving it as buddi
// serve does (HostResolver over the host's record) with every check a request gets, and a
// plain httputil.ReverseProxy to the same server, and returns the three ways (direct, plain
// proxy, preview) and a client with keep-alive.
func proxyWays(b *testing.B) ([]*way, *http.Client) {
	host, port := devServer(b)
	st, _ := host.Lookup("web")
	f := newFixtureResolving(b, preview.HostResolver("developer", host))
	cookie := f.open(b, "web")
	upstream := &url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	plain := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(upstream); pr.Out.Host = pr.In.Host },
		Transport: &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second},
	})
	b.Cleanup(plain.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	return []*way{
		{url: upstream.String() + "/page", server: st.Pid},
		{url: plain.URL + "/page", server: st.Pid},
		{url: f.prev.URL + "/preview/developer/web/page", withCookie: true, cookie: cookie, server: st.Pid},
	}, client
}

// report reports the three ways' requests per second, the preview's throughput against the
// plain proxy (target ≥ 0.85) and its p50 and p99 against direct (target p99 ≤ 1.5), and the
// plain proxy's p99 against direct, what a proxy hop costs here at all.
func report(b *testing.B, ways []*way) {
	rate := func(w *way) float64 { return float64(len(w.lat)) / w.took.Seconds() }
	dRate, d50, d99 := rate(ways[0]), pct(ways[0].lat, 50), pct(ways[0].lat, 99)
	plRate, pl50, pl99 := rate(ways[1]), pct(ways[1].lat, 50), pct(ways[1].lat, 99)
	pRate, p50, p99 := rate(ways[2]), pct(ways[2].lat, 50), pct(ways[2].lat, 99)
	b.ReportMetric(dRate, "direct-req/s")
	b.ReportMetric(plRate, "plain-proxy-req/s")
	b.ReportMetric(pRate, "preview-req/s")
	b.ReportMetric(pRate/plRate, "preview/plain")
	b.ReportMetric(float64(p50)/float64(d50), "p50/direct")
	b.ReportMetric(float64(p99)/float64(d99), "p99/direct")
	b.ReportMetric(float64(pl99)/float64(d99), "plain-p99/direct")
	cpu := func(w *way) float64 { return float64(w.cpu.Microseconds()) / float64(len(w.lat)) }
	b.ReportMetric(cpu(ways[0]), "direct-cpu-µs/req")
	b.ReportMetric(cpu(ways[1]), "plain-cpu-µs/req")
	b.ReportMetric(cpu(ways[2]), "preview-cpu-µs/req")
	b.Logf("direct %.0f req/s p50 %v p99 %v cpu %.0fµs; plain proxy %.0f req/s p50 %v p99 %v cpu %.0fµs; preview %.0f req/s p50 %v p99 %v cpu %.0fµs",
		dRate, d50, d99, cpu(ways[0]), plRate, pl50, pl99, cpu(ways[1]), pRate, p50, p99, cpu(ways[2]))
}

// devServer starts a dev server (the test binary as serveAsChild's "devserver") the way
// developer.start starts a process, puts it under a process host on a tree of its own as
// buddi serve does, and returns the host and the server's port.
func devServer(b *testing.B) (*supervisor.ProcessHost, int) {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	logPath := filepath.Join(dir, "web.log")
	p, err := spawn.Start(spawn.Spec{Argv: []string{filepath.Base(exe)}, Dir: dir, Env: []string{"PATH=" + filepath.Dir(exe), childEnv + "=devserver"}, Unboxed: true}, logPath)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Stop(time.Second) })
	var port int
	pgtest.Eventually(b, "the dev server says its port", func() bool {
		data, _ := os.ReadFile(logPath)
		port, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && port > 0
	})
	sys := actors.NewSystem(nil, nil)
	tree, err := supervisor.Build(sys, supervisor.Parts{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = sys.Shutdown(ctx)
	})
	host := supervisor.NewProcessHost(sys, tree.Workspaces, supervisor.ProcessDeps{})
	if err := host.Adopt(context.Background(), proc.Spec{Workspace: "dev", Name: "web", Port: port, First: devProc{p}}); err != nil {
		b.Fatal(err)
	}
	return host, port
}

// devProc is the dev server as the host sees it.
type devProc struct{ *spawn.Process }

func (p devProc) Pid() int { return p.Identity().Pid }

func (p devProc) Exit() error {
	if e := p.Process.Exit(); e.Code != 0 {
		return fmt.Errorf("exited with status %d", e.Code)
	}
	return nil
}

// BenchmarkProxyWebsocket compares a websocket round trip (send, echo back) through the
// proxy with the same round trip direct, on one open connection each.
func BenchmarkProxyWebsocket(b *testing.B) {
	f := newFixture(b)
	cookie := f.open(b, "web")
	dial := func(url string, hdr http.Header) *websocket.Conn {
		c, _, err := websocket.DefaultDialer.Dial(url, hdr)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		return c
	}
	direct := dial(strings.Replace(f.up.srv.URL, "http://", "ws://", 1)+"/ws", nil)
	proxied := dial(strings.Replace(f.prev.URL, "http://", "ws://", 1)+"/preview/developer/web/ws", http.Header{"Cookie": {cookie.Name + "=" + cookie.Value}, "Origin": {f.prev.URL}})
	roundTrips := func(c *websocket.Conn) []time.Duration {
		lat := make([]time.Duration, 0, b.N)
		msg := []byte("hello")
		for range b.N {
			t0 := time.Now()
			if err := c.WriteMessage(websocket.TextMessage, msg); err != nil {
				b.Fatal(err)
			}
			if _, _, err := c.ReadMessage(); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		return lat
	}
	b.ResetTimer()
	d := roundTrips(direct)
	p := roundTrips(proxied)
	d50, p50 := pct(d, 50), pct(p, 50)
	b.ReportMetric(float64(d50.Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(p50.Microseconds()), "proxied-p50-µs")
	b.ReportMetric(float64(p50)/float64(d50), "p50-ratio")
	b.ReportMetric(float64(pct(p, 99))/float64(pct(d, 99)), "p99-ratio")
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}
