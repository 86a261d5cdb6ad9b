package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"buddi/db"
	"buddi/internal/pgtest"
	"buddi/migrations"
	"buddi/plugins/web"
)

// buddi web read of a server on this machine, in many spellings of its address, reaches it
// zero times: exit 1 and one sentence each, with --json too. Where the test may bind port 80
// (as root, in CI) the server listens there, so the URLs carry no port and every spelling
// is judged by its address, not refused at the port.
func TestWebReadRefusesThisMachine(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "<p>the dashboard</p>")
	}))
	suffix := ""
	if l, err := net.Listen("tcp", "127.0.0.1:80"); err == nil {
		ts.Listener.Close()
		ts.Listener = l
	} else {
		t.Logf("port 80 cannot be bound here (%v): the URLs carry the server's port", err)
	}
	ts.Start()
	defer ts.Close()
	if _, port, _ := net.SplitHostPort(ts.Listener.Addr().String()); port != "80" {
		suffix = ":" + port
	}
	_, _, vars := env(t) // no buddi set up: nothing to record in, the read goes on
	for _, host := range []string{
		"127.0.0.1", "localhost", "LOCALHOST.", "localhost.localdomain", "a.localhost", "127.1", "127.0.1", "0x7f.0.0.1", "0x7F.1",
		"0177.0.0.1", "0177.1", "2130706433", "017700000001", "0x7f000001", "127.0.0.1.", "127%2e0%2e0%2e1", "127。0。0。1",
		"１２７.０.０.１", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::127.0.0.1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::]", "[::1]",
		"0", "0.0.0.0", "[::]", "example.com@127.0.0.1",
	} {
		for _, args := range [][]string{{"web", "read", "http://" + host + suffix + "/"}, {"web", "read", "--json", "http://" + host + suffix + "/"}} {
			code, out, errOut := runBuddi(t, vars, time.Minute, args...)
			if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "buddi: agents may not reach ") {
				t.Errorf("buddi %v: exit %d, %q %q; want 1 and one sentence", args, code, out, errOut)
			}
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the local server was reached %d times", n)
	}
}

// With a database, the owner's read is recorded in web.fetches as the owner's, its reason
// the guard's sentence, no body.
func TestWebReadIsRecorded(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	pool, err := db.Open(ctx, dsn, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := migrations.Up(ctx, pool, nil, migrations.Set{Schema: web.Schema, FS: web.Migrations()}); err != nil {
		t.Fatal(err)
	}
	_, _, vars := env(t, "DATABASE_URL="+dsn)
	code, _, errOut := runBuddi(t, vars, time.Minute, "web", "read", "--purpose", "check the dashboard", "http://localhost:4317/api/health")
	if code != 1 || !strings.Contains(errOut, "port 4317 is not 80 or 443") {
		t.Fatalf("exit %d, %q", code, errOut)
	}
	rows, err := web.Store{Pool: pool}.Recent(ctx, web.Owner, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("rows %+v", rows)
	}
	r := rows[0]
	if r.Tool != "web.read" || r.Purpose != "check the dashboard" || r.Host != "localhost" || r.Outcome != web.OutcomeBlocked ||
		!strings.Contains(r.Reason, "port 4317") || r.Bytes != 0 || r.Status != 0 {
		t.Errorf("row %+v", r)
	}
	raw, _ := json.Marshal(r)
	t.Logf("row: %s", raw)

	// buddi web fetches lists it, as a table and as JSON; a bad limit is a usage error.
	code, out, errOut := runBuddi(t, vars, time.Minute, "web", "fetches", "--json", "--agent", "owner")
	var listed []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 1 || listed[0]["outcome"] != "blocked" || listed[0]["host"] != "localhost" || listed[0]["purpose"] != "check the dashboard" {
		t.Errorf("web fetches --json: exit %d, %q %q", code, out, errOut)
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "web", "fetches")
	if code != 0 || !strings.Contains(out, "OUTCOME") || !strings.Contains(out, "blocked: agents may not reach") {
		t.Errorf("web fetches: exit %d, %q", code, out)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "web", "fetches", "--limit", "0"); code != 2 || !strings.Contains(errOut, "from 1 to 200") {
		t.Errorf("--limit 0: exit %d, %q", code, errOut)
	}
}

// buddi web status says what web.status says: with a hosted provider and no key in the
// vault, which entry to set.
func TestWebStatus(t *testing.T) {
	t.Parallel()
	_, _, vars := env(t, "BUDDI_SEARCH_PROVIDER=tavily")
	code, out, errOut := runBuddi(t, vars, time.Minute, "web", "status", "--json")
	var st web.Status
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Search.Configured || st.Search.Provider != "tavily" ||
		!strings.Contains(st.Search.Problem, web.TavilyKey) || st.MaxRedirects != 3 || st.Untrusted != web.Rule {
		t.Errorf("web status --json: exit %d, %q %q", code, out, errOut)
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "web", "status")
	if code != 0 || !strings.Contains(out, "search:     not working: ") || !strings.Contains(out, "2.0 MiB") {
		t.Errorf("web status: exit %d, %q", code, out)
	}
}
