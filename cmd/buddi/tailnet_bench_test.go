package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"buddi/health"
	"buddi/tailnet/tailnettest"
)

// BenchmarkDashboardOverTailnet measures one dashboard request (GET /api/session, which passes
// the whole gate) from the owner's phone over the tailnet against the same request on
// loopback, interleaved in the same run. Over the tailnet the request crosses two userspace
// network stacks and the DERP relay, and the gate asks WhoIs and reads the owner's login and
// the session.
func BenchmarkDashboardOverTailnet(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ctl := tailnettest.StartControl(b)
	phone := tailnettest.Node(b, ctx, ctl.URL, "phone")
	home, port, vars := env(b, "TS_CONTROL_URL="+ctl.URL, "BUDDI_TAILNET_HTTPS=off")
	if code, out, errOut := runBuddi(b, vars, 2*time.Minute, "db", "migrate"); code != 0 {
		b.Fatalf("db migrate: %d %s%s", code, out, errOut)
	}
	if code, out, errOut := runBuddi(b, vars, time.Minute, "tailnet", "owner", tailnettest.Login(b, ctx, phone)); code != 0 {
		b.Fatalf("tailnet owner: %d %s%s", code, out, errOut)
	}
	s := startServeArgs(b, home, port, vars, "serve", "--tailnet")
	var tn *health.Tailnet
	waitFor(b, "the tailnet node to run", 2*time.Minute, func() bool {
		rep, err := s.fetchHealth()
		if err == nil && rep.Tailnet != nil && rep.Tailnet.State == "running" {
			tn = rep.Tailnet
		}
		return tn != nil
	})
	overTailnet := tailnetBrowser(phone)
	onLoopback := s.signedIn(b)
	tailnetURL := "http://" + tn.DNSName + "/api/session"
	loopbackURL := fmt.Sprintf("http://127.0.0.1:%d/api/session", s.port)
	fetch := func(c *http.Client, url string) time.Duration {
		start := time.Now()
		resp, err := c.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %s", url, resp.Status)
		}
		return time.Since(start)
	}
	// The first request over the tailnet sets the path up and opens the session.
	for range 20 {
		tailnetDo(b, overTailnet, http.MethodGet, tailnetURL, nil, "")
		fetch(onLoopback, loopbackURL)
	}
	var tail, loop []time.Duration
	b.ResetTimer()
	for b.Loop() {
		loop = append(loop, fetch(onLoopback, loopbackURL))
		tail = append(tail, fetch(overTailnet, tailnetURL))
	}
	b.StopTimer()
	if lc, err := phone.LocalClient(); err == nil {
		if st, err := lc.Status(ctx); err == nil {
			for _, p := range st.Peer {
				b.Logf("path to %s: direct %q, relay %q", p.HostName, p.CurAddr, p.Relay)
			}
		}
	}
	pct := func(d []time.Duration, p float64) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[int(float64(len(s)-1)*p)].Microseconds())
	}
	b.ReportMetric(pct(loop, 0.5), "loopback-p50-µs")
	b.ReportMetric(pct(loop, 0.99), "loopback-p99-µs")
	b.ReportMetric(pct(tail, 0.5), "tailnet-p50-µs")
	b.ReportMetric(pct(tail, 0.99), "tailnet-p99-µs")
	b.ReportMetric(pct(tail, 0.5)/pct(loop, 0.5), "p50-ratio")
	b.ReportMetric(pct(tail, 0.99)/pct(loop, 0.99), "p99-ratio")
}
