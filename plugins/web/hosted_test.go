package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"buddi/internal/pgtest"
	"buddi/migrations"
	"buddi/plugins"
)

// searchKey is the key a test's vault holds; it must never reach a result or a record.
const searchKey = "tvly-dev-s3cr3t-k3y-1234567890"

// vaultOf is a vault read with the given entries.
func vaultOf(entries map[string]string) func(string) (string, error) {
	return func(name string) (string, error) {
		v, ok := entries[name]
		if !ok {
			return "", errors.New("no such secret")
		}
		return v, nil
	}
}

// search runs web.search once through the tool, as an agent would, over a migrated pool.
func searchOnce(t *testing.T, cfg SearchConfig) (plugins.Result, Record) {
	t.Helper()
	pool := pgtest.Pool(t)
	if _, err := migrations.Up(context.Background(), pool, nil, migrations.Set{Schema: Schema, FS: Migrations()}); err != nil {
		t.Fatal(err)
	}
	p := New(Deps{Pool: pool, Search: cfg})
	res, err := (&searchTool{p: p}).Execute(context.Background(), plugins.Call{Agent: "scout", Args: json.RawMessage(`{"query":"opening hours","purpose":"plan the day"}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Store{Pool: pool}.Recent(context.Background(), "scout", 5)
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %+v %v", rows, err)
	}
	raw, _ := json.Marshal(rows[0])
	if strings.Contains(res.Text, searchKey) || strings.Contains(string(raw), searchKey) {
		t.Fatalf("the key reached the result or the record: %s %s", res.Text, raw)
	}
	return res, rows[0]
}

// Tavily is asked with its own request (POST /search, the key as a bearer token, the query
// in the JSON body), the key read from the vault at the search; its results come back with
// source, url and the rule.
func TestSearchAsksTavily(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var body struct {
			Query      string `json:"query"`
			MaxResults int    `json:"max_results"`
		}
		raw, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/search" || r.Header.Get("Authorization") != "Bearer "+searchKey ||
			json.Unmarshal(raw, &body) != nil || body.Query != "opening hours" || body.MaxResults != maxResults {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"detail":{"error":"bad request %s %s %s"}}`, r.Method, r.URL.Path, raw)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"query":"opening hours","results":[
			{"title":"Library","url":"https://library.example/hours","content":"Open  at nine.","score":0.9},
			{"title":"Bad","url":"file:///etc/passwd","content":"dropped","score":0.5}],"response_time":0.4}`)
	}))
	defer srv.Close()
	cfg := SearchConfig{Provider: ProviderTavily, URL: srv.URL, Secret: vaultOf(map[string]string{TavilyKey: searchKey})}
	res, row := searchOnce(t, cfg)
	if res.IsError {
		t.Fatalf("search failed: %s", res.Text)
	}
	var out Results
	if err := json.Unmarshal([]byte(res.Text), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 1 || out.Results[0].URL != "https://library.example/hours" || out.Results[0].Snippet != "Open at nine." ||
		out.Results[0].Source != Source || out.Results[0].Untrusted != Rule {
		t.Errorf("results %+v", out.Results)
	}
	if row.Tool != "web.search" || row.Outcome != OutcomeOK || row.Purpose != "plan the day" || row.Status != 200 || calls.Load() != 1 {
		t.Errorf("row %+v after %d calls", row, calls.Load())
	}
	if st := New(Deps{Search: cfg}).Status().Search; !st.Configured || st.Provider != ProviderTavily {
		t.Errorf("status %+v", st)
	}
}

// Brave is asked with its own request (GET /res/v1/web/search, the key in
// X-Subscription-Token); the words it marks with <strong> come back as text.
func TestSearchAsksBrave(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/res/v1/web/search" || r.URL.Query().Get("q") != "opening hours" ||
			r.Header.Get("X-Subscription-Token") != searchKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"type":"search","query":{"original":"opening hours"},"web":{"type":"search","results":[
			{"title":"The <strong>Library</strong>","url":"https://library.example/","description":"Open at <strong>nine</strong> &amp; closed on Sundays."}]}}`)
	}))
	defer srv.Close()
	res, row := searchOnce(t, SearchConfig{Provider: ProviderBrave, URL: srv.URL, Secret: vaultOf(map[string]string{BraveKey: searchKey})})
	var out Results
	if res.IsError || json.Unmarshal([]byte(res.Text), &out) != nil {
		t.Fatalf("search: %s", res.Text)
	}
	if len(out.Results) != 1 || out.Results[0].Title != "The Library" || out.Results[0].Snippet != "Open at nine & closed on Sundays." {
		t.Errorf("results %+v", out.Results)
	}
	if row.Outcome != OutcomeOK || row.Host != strings.TrimPrefix(srv.URL, "http://") {
		t.Errorf("row %+v", row)
	}
}

// Without the key in the vault, web.status says which entry to set and web.search fails in
// that sentence, asking nothing; a key the API refuses is one sentence naming the entry,
// recorded as an error.
func TestHostedSearchWithoutAGoodKey(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"detail":{"error":"Unauthorized: missing or invalid API key."}}`)
	}))
	defer srv.Close()
	none := SearchConfig{Provider: ProviderTavily, URL: srv.URL, Secret: vaultOf(nil)}
	st := New(Deps{Search: none}).Status().Search
	if st.Configured || !strings.Contains(st.Problem, "buddi vault set "+TavilyKey) {
		t.Errorf("status without a key: %+v", st)
	}
	res, row := searchOnce(t, none)
	if !res.IsError || !strings.Contains(res.Text, TavilyKey) || calls.Load() != 0 || row.Outcome != OutcomeError {
		t.Errorf("without a key: %+v, row %+v, %d calls", res, row, calls.Load())
	}
	res, row = searchOnce(t, SearchConfig{Provider: ProviderTavily, URL: srv.URL, Secret: vaultOf(map[string]string{TavilyKey: searchKey})})
	if !res.IsError || !strings.Contains(res.Text, "refused the key") || !strings.Contains(res.Text, TavilyKey) || row.Status != 401 || row.Outcome != OutcomeError {
		t.Errorf("a refused key: %+v, row %+v", res, row)
	}
	for _, bad := range []SearchConfig{{Provider: "bing"}, {Provider: ProviderSearXNG}, {Provider: ProviderBrave, URL: "ftp://x"}, {Provider: ProviderTavily, URL: "https://u:p@api.example"}} {
		if st := New(Deps{Search: bad}).Status().Search; st.Configured || st.Problem == "" {
			t.Errorf("%+v: status %+v", bad, st)
		}
	}
}

// buddi serve binds the vault after the manifests are built: from then on web.status finds
// the key, and a key set after the start is found at the next look.
func TestBindSecretsHandsTheVaultToSearch(t *testing.T) {
	entries := map[string]string{}
	m := Manifest(Deps{Search: SearchConfig{Provider: ProviderBrave}})
	status := func() SearchStatus {
		for _, tool := range m.Tools {
			if st, ok := tool.(*statusTool); ok {
				return st.p.Status().Search
			}
		}
		t.Fatal("no web.status")
		return SearchStatus{}
	}
	if st := status(); st.Configured || !strings.Contains(st.Problem, "cannot be read here") {
		t.Errorf("before the bind: %+v", st)
	}
	if !BindSecrets([]plugins.Manifest{{Name: "other"}, m}, vaultOf(entries)) {
		t.Fatal("web.search not found")
	}
	if st := status(); st.Configured || !strings.Contains(st.Problem, BraveKey) {
		t.Errorf("bound, no key yet: %+v", st)
	}
	entries[BraveKey] = searchKey
	if st := status(); !st.Configured || st.Host != "api.search.brave.com" {
		t.Errorf("with the key: %+v", st)
	}
}
