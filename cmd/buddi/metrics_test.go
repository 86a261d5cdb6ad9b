package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
)

// scrapeServe reads the served /metrics with client (nil: the command line's token) and
// parses it with Prometheus's own text parser.
func scrapeServe(t *testing.T, s *served, client *http.Client) map[string]*dto.MetricFamily {
	t.Helper()
	var resp *http.Response
	var err error
	if client == nil {
		resp, err = s.get("/metrics")
	} else {
		resp, err = client.Get(s.url("/metrics"))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics: %s %.300s", resp.Status, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("GET /metrics: Content-Type %q, want Prometheus's text format", ct)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

// sum adds up family's series whose labels include want: a counter's or gauge's value, a
// histogram's count.
func sum(families map[string]*dto.MetricFamily, family string, want map[string]string) float64 {
	total := 0.0
	f := families[family]
	if f == nil {
		return 0
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}

// url is the served dashboard's address for path.
func (s *served) url(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", s.port, path)
}

// /metrics on a whole buddi serve: scraped with the owner's session or the command line's
// token, parsed by Prometheus's text parser, its families there, and the figures move with a
// turn that calls a tool; without a credential it is a 401. River's UI answers the owner
// under /river/, and nobody else.
func TestServeMetricsAndQueueUI(t *testing.T) {
	model, s, vars, _ := scriptedServeAt(t)
	ws := t.TempDir()
	if code, out, errOut := runBuddi(t, vars, time.Minute, "developer", "workspace", "set", ws); code != 0 {
		t.Fatalf("workspace set: %d %s%s", code, out, errOut)
	}
	for _, path := range []string{"/metrics", "/river/", "/river/api/jobs?state=completed"} {
		resp, err := http.Get(s.url(path))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(body), "buddi_") {
			t.Errorf("GET %s without a credential: %s, want 401 and nothing of it", path, resp.Status)
		}
	}

	before := scrapeServe(t, s, nil)
	for _, name := range []string{"buddi_runs_started_total", "buddi_runs_finished_total", "buddi_turns_total",
		"buddi_approvals_waiting", "go_goroutines"} {
		if before[name] == nil {
			t.Errorf("no family %s in /metrics before any turn", name)
		}
	}

	model.Script(
		pt.Tools(pt.ToolCall{ID: "toolu_m", Name: provider.WireToolName("developer.write"), Args: `{"path":"m.txt","content":"m\n"}`}),
		pt.Text("Written."),
	)
	postMessage(t, s, map[string]any{"agent": "@dev", "text": "write m.txt", "surface": "terminal"})
	answered := map[string]string{"outcome": "answered"}
	var after map[string]*dto.MetricFamily
	waitFor(t, "the run's end on /metrics", time.Minute, func() bool {
		after = scrapeServe(t, s, nil)
		return sum(after, "buddi_runs_finished_total", answered) > sum(before, "buddi_runs_finished_total", answered)
	})
	if b, err := os.ReadFile(filepath.Join(ws, "m.txt")); err != nil || string(b) != "m\n" {
		t.Fatalf("the tool's effect: %q %v", b, err)
	}
	moved := []struct {
		family string
		labels map[string]string
		by     float64
	}{
		{"buddi_runs_started_total", nil, 1},
		{"buddi_runs_finished_total", answered, 1},
		{"buddi_turns_total", nil, 2},
		{"buddi_tool_calls_total", map[string]string{"outcome": "succeeded"}, 1},
		{"buddi_provider_request_duration_seconds", map[string]string{"provider": "anthropic"}, 2},
	}
	for _, m := range moved {
		if got := sum(after, m.family, m.labels) - sum(before, m.family, m.labels); got != m.by {
			t.Errorf("%s%v moved by %v over the turn, want %v", m.family, m.labels, got, m.by)
		}
	}
	if after["buddi_provider_errors_total"] == nil || sum(after, "buddi_provider_errors_total", nil) != 0 {
		t.Errorf("buddi_provider_errors_total after two answered requests: %v", after["buddi_provider_errors_total"])
	}
	if sum(after, "buddi_queue_jobs", nil) == 0 {
		t.Error("buddi_queue_jobs counts no job after a turn")
	}
	waitFor(t, "a job's wait on /metrics", time.Minute, func() bool {
		return sum(scrapeServe(t, s, nil), "buddi_queue_wait_seconds", nil) > 0
	})

	// The owner's browser session reads the same, and River's UI.
	browser := s.signedIn(t)
	if f := scrapeServe(t, s, browser); f["buddi_runs_started_total"] == nil {
		t.Error("/metrics through the owner's session has no buddi_runs_started_total")
	}
	for _, path := range []string{"/river/", "/river/api/jobs?state=completed"} {
		resp, err := browser.Get(s.url(path))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s signed in: %s %.300s", path, resp.Status, body)
		}
	}
}
