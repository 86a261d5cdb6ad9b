package dashboard_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/riverqueue/river"

	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/metrics"
	"buddi/migrations"
	"buddi/queue"
	"buddi/surfaces/dashboard"
)

// opsBundle is a dashboard server with /metrics and the queue's UI, over its own database.
type opsBundle struct {
	ts     *httptest.Server
	pool   *pgxpool.Pool
	client *river.Client[pgx.Tx]
	token  string
}

func setupOps(t *testing.T) opsBundle {
	t.Helper()
	pool := pgtest.Pool(t)
	client, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	ui, err := dashboard.QueueUI(client, nil)
	if err != nil {
		t.Fatal(err)
	}
	const token = "cli-token-0123456789abcdefghijklmnopqrstuvwxyz"
	srv := dashboard.NewServer(dashboard.Deps{Pool: pool, Seal: key, CLIToken: token,
		Health:  func(context.Context) health.Report { return health.Report{Status: "ok"} },
		Metrics: metrics.Handler(metrics.Sources{DB: pool, RiverSchema: migrations.RiverSchema}),
		QueueUI: ui,
	})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	signIn(t, pool, key, ts.Listener.Addr().String())
	return opsBundle{ts: ts, pool: pool, client: client, token: token}
}

// scrape reads /metrics as a monitor does (with the command line's token, or the owner's
// session when token is empty) and parses it with Prometheus's own text parser.
func scrape(t *testing.T, url, token string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	} else {
		addSession(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics: %s %s", resp.Status, b)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

// value is the value of family's series whose labels include want (0 when there is none).
func value(families map[string]*dto.MetricFamily, family string, want map[string]string) float64 {
	f := families[family]
	if f == nil {
		return 0
	}
next:
	for _, m := range f.GetMetric() {
		for k, v := range want {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}

// opsArgs is a job of a kind no worker takes: it stays available.
type opsArgs struct{}

func (opsArgs) Kind() string { return "metrics.test" }

// /metrics is the owner's: without the session or the command line's token it is a 401 and
// none of the figures; with either it is Prometheus's text format, whose database figures
// follow the database (an approval waiting, a job queued).
func TestMetricsAreTheOwners(t *testing.T) {
	t.Parallel()
	b := setupOps(t)
	for _, auth := range []string{"", "Bearer wrong-token"} {
		req, _ := http.NewRequest("GET", b.ts.URL+"/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(body), "buddi_") {
			t.Errorf("GET /metrics with %q: %s, want 401 and no figures:\n%.300s", auth, resp.Status, body)
		}
	}

	before := scrape(t, b.ts.URL, b.token)
	for _, name := range []string{"buddi_approvals_waiting", "buddi_runs_started_total", "buddi_runs_finished_total",
		"buddi_turns_total", "go_goroutines", "process_resident_memory_bytes"} {
		if before[name] == nil {
			t.Errorf("no family %s in /metrics", name)
		}
	}
	if got := value(before, "buddi_approvals_waiting", nil); got != 0 {
		t.Errorf("approvals waiting on an empty database: %v", got)
	}

	newAction(t, b.pool)
	if _, err := b.client.Insert(context.Background(), opsArgs{}, nil); err != nil {
		t.Fatal(err)
	}
	after := scrape(t, b.ts.URL, "") // the owner's session reads it too
	if got := value(after, "buddi_approvals_waiting", nil); got != 1 {
		t.Errorf("approvals waiting after one was proposed: %v, want 1", got)
	}
	if got := value(after, "buddi_queue_jobs", map[string]string{"kind": "metrics.test", "state": "available"}); got != 1 {
		t.Errorf("buddi_queue_jobs{kind=metrics.test,state=available}: %v, want 1", got)
	}
	if after["buddi_queue_oldest_available_seconds"] == nil {
		t.Error("no family buddi_queue_oldest_available_seconds with a job waiting")
	}
}

// River's own UI is served under /river/ behind the same gate: its page and its API answer
// the owner, a request without a credential gets a 401, and a write from another origin is
// refused while the page's own goes through.
func TestQueueUIIsTheOwners(t *testing.T) {
	t.Parallel()
	b := setupOps(t)
	job, err := b.client.Insert(context.Background(), opsArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp := get(t, b.ts.URL+"/river/")
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "<title>River</title>") || !strings.Contains(string(page), `/river/api`) {
		t.Fatalf("GET /river/ signed in: %s\n%.500s", resp.Status, page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("River's page runs on the dashboard's origin with the policy %q", csp)
	}
	resp = get(t, b.ts.URL+"/river/api/jobs?state=available")
	var list struct {
		Data []struct {
			ID   int64  `json:"id"`
			Kind string `json:"kind"`
		} `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil || len(list.Data) != 1 || list.Data[0].Kind != "metrics.test" {
		t.Fatalf("GET /river/api/jobs signed in: %s %v %+v", resp.Status, err, list)
	}

	for _, path := range []string{"/river/", "/river/api/jobs?state=available"} {
		resp, err := http.Get(b.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(body), "metrics.test") {
			t.Errorf("GET %s without a session: %s, want 401 and nothing of the queue", path, resp.Status)
		}
	}

	cancel := `{"ids":["` + strconv.FormatInt(job.Job.ID, 10) + `"]}`
	// A page on another port of this host (same site, another origin) sends the owner's cookie.
	if code, _ := do(t, "POST", b.ts.URL+"/river/api/jobs/cancel", map[string]string{"Origin": "http://127.0.0.1:1", "Content-Type": "text/plain"}, cancel); code != http.StatusForbidden {
		t.Errorf("a cancel from another origin: %d, want 403", code)
	}
	if code, _ := do(t, "POST", b.ts.URL+"/river/api/jobs/cancel", map[string]string{"Content-Type": "text/plain;charset=UTF-8"}, cancel); code != http.StatusOK {
		t.Errorf("the page's own cancel: %d, want 200", code)
	}
	got, err := b.client.JobGet(context.Background(), job.Job.ID)
	if err != nil || got.State != "cancelled" {
		t.Errorf("the job after the page's cancel: %v %v", got.State, err)
	}
}
