package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/surfaces/dashboard"
)

// The scrape token opens GET /metrics and nothing else: not the API, not a write, not River's
// UI; the command line's token still opens everything.
func TestScrapeTokenOpensOnlyMetrics(t *testing.T) {
	t.Parallel()
	const cli, scrape = "cli-token-0123456789abcdefghijklmnopqrstuvwxyz", "scrape-token-0123456789abcdefghijklmnopqrstu"
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "buddi_test_total", Help: "A test counter."}))
	srv := dashboard.NewServer(dashboard.Deps{Pool: pgtest.Pool(t), Seal: key, CLIToken: cli, MetricsToken: scrape,
		Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
		QueueUI: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("river")) }),
		Health:  func(context.Context) health.Report { return health.Report{Status: "ok"} }})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	send := func(method, path, token string) int {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := send("GET", "/metrics", scrape); code != http.StatusOK {
		t.Errorf("GET /metrics with the scrape token: %d", code)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/health"}, {"GET", "/api/approvals"}, {"POST", "/api/approvals/00000000-0000-4000-8000-000000000000/approve"},
		{"GET", "/river/"}, {"POST", "/metrics"}, {"GET", "/metrics/"}, {"GET", "/"},
	} {
		if code := send(c.method, c.path, scrape); code != http.StatusUnauthorized {
			t.Errorf("%s %s with the scrape token: %d, want 401", c.method, c.path, code)
		}
	}
	// A refused scrape is told why in JSON, not given the browser's sign-in page.
	resp, err := ts.Client().Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("GET /metrics without a credential: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if code := send("GET", "/api/health", cli); code != http.StatusOK {
		t.Errorf("GET /api/health with the command line's token: %d", code)
	}
}
