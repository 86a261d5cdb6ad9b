package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/surfaces/dashboard"
)

// /api/health answers 200 only when the report says ok: a degraded buddi answers 503, with
// the report as its body, so a monitor that reads only the code sees it.
func TestHealthCodeFollowsTheReport(t *testing.T) {
	t.Parallel()
	var status atomic.Value
	status.Store("ok")
	const token = "cli-token-0123456789abcdefghijklmnopqrstuvwxyz"
	srv := dashboard.NewServer(dashboard.Deps{Pool: pgtest.Pool(t), Seal: key, CLIToken: token,
		Health: func(context.Context) health.Report {
			s := status.Load().(string)
			rep := health.Report{Status: s, Version: "test"}
			if s != "ok" {
				rep.Problems = []string{"the database does not answer"}
			}
			return rep
		}})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	get := func() (int, health.Report) {
		t.Helper()
		req, _ := http.NewRequest("GET", ts.URL+"/api/health", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var rep health.Report
		if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
			t.Fatalf("the body of a %d: %v", resp.StatusCode, err)
		}
		return resp.StatusCode, rep
	}
	if code, rep := get(); code != http.StatusOK || rep.Status != "ok" {
		t.Errorf("ok: %d %+v", code, rep)
	}
	status.Store("degraded")
	if code, rep := get(); code != http.StatusServiceUnavailable || rep.Status != "degraded" || len(rep.Problems) != 1 {
		t.Errorf("degraded: %d %+v", code, rep)
	}
}
