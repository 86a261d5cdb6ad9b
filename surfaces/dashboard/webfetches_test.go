package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// fetchLog is a WebFetches over fixed rows.
type fetchLog struct {
	rows  []WebFetch
	err   error
	asked struct {
		agent string
		n     int
	}
}

func (f *fetchLog) Recent(_ context.Context, agent string, n int) ([]WebFetch, error) {
	f.asked.agent, f.asked.n = agent, n
	return f.rows, f.err
}

// Activity's web reads: the rows as the log gives them (no body field at all), the agent
// and limit passed on, a bad limit refused in one sentence, a failed read a 500, and no
// route without the web plugin.
func TestWebFetchesRoute(t *testing.T) {
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	log := &fetchLog{rows: []WebFetch{{Agent: "scout", At: at, Tool: "web.read", Purpose: "check the dashboard", Host: "localhost",
		Outcome: "blocked", Reason: "agents may not reach localhost: it is this machine."}}}
	get := func(deps Deps, path string) (int, map[string]json.RawMessage) {
		deps.CLIToken = "t0k"
		srv := httptest.NewServer(NewServer(deps).Handler())
		defer srv.Close()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer t0k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]json.RawMessage
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	code, body := get(Deps{WebFetches: log}, "/api/web/fetches?agent=scout&limit=5")
	var rows []map[string]any
	if err := json.Unmarshal(body["fetches"], &rows); code != 200 || err != nil || len(rows) != 1 {
		t.Fatalf("%d %s", code, body["fetches"])
	}
	if rows[0]["host"] != "localhost" || rows[0]["outcome"] != "blocked" || rows[0]["purpose"] != "check the dashboard" || log.asked.agent != "scout" || log.asked.n != 5 {
		t.Errorf("row %v, asked %+v", rows[0], log.asked)
	}
	for _, k := range []string{"body", "text", "content"} {
		if _, ok := rows[0][k]; ok {
			t.Errorf("a row carries %q", k)
		}
	}
	if code, body := get(Deps{WebFetches: log}, "/api/web/fetches?limit=5000"); code != 400 || len(body["error"]) == 0 {
		t.Errorf("limit 5000: %d %s", code, body["error"])
	}
	if code, _ := get(Deps{WebFetches: &fetchLog{err: errors.New("no web schema")}}, "/api/web/fetches"); code != 500 {
		t.Errorf("a failed read: %d", code)
	}
	if code, body := get(Deps{WebFetches: &fetchLog{}}, "/api/web/fetches"); code != 200 || string(body["fetches"]) != "[]" {
		t.Errorf("none: %d %s", code, body["fetches"])
	}
	if code, _ := get(Deps{}, "/api/web/fetches"); code == 200 {
		t.Error("the route is served without the web plugin")
	}
}
