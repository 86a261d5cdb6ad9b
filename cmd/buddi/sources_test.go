package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/sources"
)

// The compiled-in source (email.inbox) is listed from the ledger: before buddi is set up the
// list says in one sentence what to run first; after, it lists the source as never polled,
// as text and as JSON.
func TestSourcesListTheCompiledInSource(t *testing.T) {
	t.Parallel()
	_, _, vars := env(t)
	code, out, errOut := runBuddi(t, vars, time.Minute, "sources", "list")
	if code != 3 || !strings.Contains(errOut, "buddi serve") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Errorf("sources list before set-up: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runBuddi(t, vars, 2*time.Minute, "db", "migrate"); code != 0 {
		t.Fatalf("db migrate: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runBuddi(t, vars, time.Minute, "sources", "list")
	if code != 0 || !strings.Contains(out, "email.inbox") {
		t.Errorf("sources list: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runBuddi(t, vars, time.Minute, "sources", "--json")
	var list []sources.Status
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0].ID != "email.inbox" {
		t.Errorf("sources --json: exit %d\n%s%s; want email.inbox", code, out, errOut)
	}
}

// The table reads the ledger: a source that polled, one failing in a row with its sentence,
// one that never polled and is due now.
func TestSourcesTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.Local)
	e := &sources.Engine{Pool: pool, Now: func() time.Time { return now }}
	fine := plugins.Source{ID: "feed.fine", Period: time.Hour, Poll: func(context.Context, plugins.EnqueueRun) error { return nil }}
	down := plugins.Source{ID: "feed.down", Period: time.Hour, Poll: func(context.Context, plugins.EnqueueRun) error { return errors.New("the feed is down") }}
	idle := plugins.Source{ID: "feed.idle", Period: 15 * time.Minute, Poll: fine.Poll}
	if _, err := e.Tick(ctx, fine); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := e.Tick(ctx, down); err == nil {
			t.Fatal("a failing poll reported no error")
		}
	}
	entries, err := sources.Of([]plugins.Manifest{{Name: "feed", Sources: []plugins.Source{fine, down, idle}}})
	if err != nil {
		t.Fatal(err)
	}
	sts, err := e.Statuses(ctx, entries)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := printSources(&buf, sts, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "SOURCE") {
		t.Fatalf("the table:\n%s", buf.String())
	}
	for i, want := range [][]string{
		{"feed.fine", "feed", "1h0m0s", "Dec 1 09:00", "Dec 1 10:00", "ok"},
		{"feed.down", "Dec 1 09:01", "failed 2 times in a row: the feed is down"},
		{"feed.idle", "15m0s", "never", "now", "never"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i+1], w) {
				t.Errorf("line %q lacks %q", lines[i+1], w)
			}
		}
	}
}
