package metrics_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/riverqueue/river"

	"buddi/actors"
	"buddi/actors/actorstest"
	"buddi/internal/pgtest"
	"buddi/metrics"
	"buddi/queue"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// scrape serves h once and parses its body with Prometheus's own text parser.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return families
}

// count is the value (a histogram's count) of family's series with exactly labels.
func count(families map[string]*dto.MetricFamily, family string, labels map[string]string) float64 {
	f := families[family]
	if f == nil {
		return 0
	}
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		same := true
		for _, l := range m.GetLabel() {
			same = same && labels[l.GetName()] == l.GetValue()
		}
		if !same {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}

// A supervisor's restart of a crashed actor counts under its subtree, and a child that spends
// its budget counts as stopped.
func TestActorRestartsAreCounted(t *testing.T) {
	t.Parallel()
	events := actorstest.NewEvents()
	sys := actors.NewSystem(slog.New(slog.DiscardHandler), events.Sink)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), actorstest.Timeout)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	h := metrics.Handler(metrics.Sources{})
	sub := map[string]string{"supervisor": "root/metricstest"}
	before := scrape(t, h)
	root, err := sys.NewSupervisor(nil, "root", actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 5, Within: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	inner, err := sys.NewSupervisor(root, "metricstest", actors.Strategy{Kind: actors.OneForOne, Contain: true, Budget: actors.Budget{MaxRestarts: 1, Within: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sys.Spawn(inner, "crashy", actors.Go("crashy", func(ctx context.Context) error { panic("boom") })); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{actors.EventRestarted, actors.EventStopped} {
		if ev := events.Next(t); ev.Kind != want || ev.Child != "root/metricstest/crashy" {
			t.Fatalf("event %+v, want %s of root/metricstest/crashy", ev, want)
		}
	}
	after := scrape(t, h)
	if got := count(after, "buddi_actor_restarts_total", sub) - count(before, "buddi_actor_restarts_total", sub); got != 1 {
		t.Errorf("restarts under root/metricstest moved by %v, want 1", got)
	}
	if got := count(after, "buddi_actor_stops_total", sub) - count(before, "buddi_actor_stops_total", sub); got != 1 {
		t.Errorf("stops under root/metricstest moved by %v, want 1", got)
	}
}

// collector is an OTLP/HTTP trace receiver: it keeps the bodies posted to /v1/traces.
type collector struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	if r.URL.Path == "/v1/traces" {
		c.mu.Lock()
		c.bodies = append(c.bodies, b)
		c.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

func (c *collector) received(s string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.bodies {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// A job the queue works is timed on /metrics (its wait and its work, by kind); with an OTLP
// endpoint configured it is also a span sent to the collector, and without one nothing of
// OpenTelemetry starts.
func TestJobsAreTimedAndTraced(t *testing.T) {
	t.Parallel()
	if p, stop := metrics.Traces(context.Background(), func(string) string { return "" }, nil); p != nil || len(metrics.QueuePlugins(p)) != 1 {
		t.Fatalf("with no exporter configured: plugin %v, queue plugins %v; want none but Jobs", p, metrics.QueuePlugins(p))
	} else {
		stop()
	}
	if metrics.TracesConfigured(func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"}[k]
	}) {
		t.Error("OTEL_TRACES_EXPORTER=none: traces configured")
	}

	recv := &collector{}
	otlp := httptest.NewServer(recv)
	t.Cleanup(otlp.Close)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.URL, "OTEL_SERVICE_NAME": "buddi-metrics-test"}
	plugin, stopTraces := metrics.Traces(context.Background(), func(k string) string { return env[k] }, nil)
	if plugin == nil {
		t.Fatal("an OTLP endpoint is configured, and Traces started nothing")
	}

	pool := pgtest.Pool(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := queue.New(pool, queue.Options{Plugins: metrics.QueuePlugins(plugin)})
	if err != nil {
		t.Fatal(err)
	}
	h := metrics.Handler(metrics.Sources{})
	probe := map[string]string{"kind": "queue.probe"}
	before := scrape(t, h)
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	sub, unsubscribe := q.Client().Subscribe(river.EventKindJobCompleted)
	defer unsubscribe()
	if _, err := q.Client().Insert(ctx, queue.ProbeArgs{Note: "timed"}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sub:
	case <-ctx.Done():
		t.Fatal("the probe job did not complete")
	}
	if err := q.Stop(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	stopTraces() // flushes the batch

	after := scrape(t, h)
	if got := count(after, "buddi_queue_wait_seconds", probe) - count(before, "buddi_queue_wait_seconds", probe); got != 1 {
		t.Errorf("buddi_queue_wait_seconds{kind=queue.probe} moved by %v, want 1", got)
	}
	done := map[string]string{"kind": "queue.probe", "outcome": "ok"}
	if got := count(after, "buddi_job_duration_seconds", done) - count(before, "buddi_job_duration_seconds", done); got != 1 {
		t.Errorf("buddi_job_duration_seconds{kind=queue.probe,outcome=ok} moved by %v, want 1", got)
	}
	for _, s := range []string{"river.work/queue.probe", "buddi-metrics-test"} {
		if !recv.received(s) {
			t.Errorf("the collector received no span naming %q", s)
		}
	}
}
