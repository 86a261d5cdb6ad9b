package sentinels_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/actors"
	"buddi/core/conversation"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/sentinels"
	"buddi/supervisor"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type woken struct {
	mu   sync.Mutex
	keys []string
}

func (w *woken) wake(_ context.Context, _ string, fs []plugins.Finding) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range fs {
		w.keys = append(w.keys, f.Key)
	}
	return nil
}

func (w *woken) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := w.keys
	w.keys = nil
	return k
}

func digest(t *testing.T, pool *pgxpool.Pool) int {
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM core.digest_items WHERE consumed_at IS NULL`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Cooldowns, resolving, escalation, snoozes and mutes, with an injected clock.
func TestDecisions(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	clk := &clock{t: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	w := &woken{}
	e := &sentinels.Engine{Pool: pool, Wake: w.wake, Now: clk.now}
	var current []plugins.Finding
	s := plugins.Sentinel{ID: "test.watch", Period: time.Minute, Check: func(context.Context) ([]plugins.Finding, error) { return current, nil }}
	tick := func() {
		t.Helper()
		if _, err := e.Tick(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	urgent := plugins.Finding{Key: "disk", Severity: "urgent", OwnerLine: "The disk is full.", Kind: "disk", Subject: "/"}
	info := plugins.Finding{Key: "tests", Severity: "info", OwnerLine: "2 tests fail.", Kind: "tests", Subject: "dev"}

	current = []plugins.Finding{urgent, info}
	tick()
	if k := w.take(); len(k) != 1 || k[0] != "disk" || digest(t, pool) != 1 {
		t.Fatalf("new findings: woke %v, digest %d", k, digest(t, pool))
	}
	clk.add(time.Hour)
	tick()
	if k := w.take(); len(k) != 0 {
		t.Fatalf("within its cooldown it spoke again: %v", k)
	}
	clk.add(urgentPlus())
	tick()
	if k := w.take(); len(k) != 1 {
		t.Fatalf("past its 24 h cooldown it stayed quiet: %v", k)
	}
	// Resolved, then back: it speaks at once.
	current = []plugins.Finding{info}
	tick()
	current = []plugins.Finding{urgent, info}
	tick()
	if k := w.take(); len(k) != 1 {
		t.Fatalf("resolved and back, it stayed quiet: %v", k)
	}
	// Info escalating to urgent speaks at once.
	esc := info
	esc.Severity = "urgent"
	current = []plugins.Finding{urgent, esc}
	tick()
	if k := w.take(); len(k) != 1 || k[0] != "tests" {
		t.Fatalf("escalation: %v", k)
	}
	// Snoozed ("Not now") and muted findings never speak, however long.
	if err := e.Snooze(ctx, "test.watch", "disk", false); err != nil {
		t.Fatal(err)
	}
	if err := e.Mute(ctx, "tests", ""); err != nil {
		t.Fatal(err)
	}
	clk.add(2 * urgentPlus())
	tick()
	if k := w.take(); len(k) != 0 {
		t.Fatalf("a snoozed or muted finding spoke: %v", k)
	}
	// Switched off, the sentinel is never due.
	if err := e.Switch(ctx, "test.watch", false); err != nil {
		t.Fatal(err)
	}
	if due, _, err := e.Due(ctx, s); err != nil || due {
		t.Fatalf("a switched-off sentinel is due: %v %v", due, err)
	}
}

func urgentPlus() time.Duration { return sentinels.UrgentCooldown + time.Minute }

// A check that fails records its error and resolves nothing.
func TestFailedCheckResolvesNothing(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	w := &woken{}
	e := &sentinels.Engine{Pool: pool, Wake: w.wake}
	fail := false
	s := plugins.Sentinel{ID: "test.flaky", Period: time.Minute, Check: func(context.Context) ([]plugins.Finding, error) {
		if fail {
			return nil, errors.New("the source is down")
		}
		return []plugins.Finding{{Key: "k", Severity: "urgent", OwnerLine: "x"}}, nil
	}}
	if _, err := e.Tick(ctx, s); err != nil {
		t.Fatal(err)
	}
	fail = true
	if _, err := e.Tick(ctx, s); err == nil {
		t.Fatal("a failing check reported no error")
	}
	var resolved *time.Time
	if err := pool.QueryRow(ctx, `SELECT resolved_at FROM core.sentinel_findings WHERE sentinel = 'test.flaky' AND key = 'k'`).Scan(&resolved); err != nil || resolved != nil {
		t.Fatalf("the failed check resolved the finding: %v %v", resolved, err)
	}
	var recorded string
	_ = pool.QueryRow(ctx, `SELECT error FROM core.sentinel_runs WHERE sentinel = 'test.flaky' ORDER BY id DESC LIMIT 1`).Scan(&recorded)
	if recorded != "the source is down" {
		t.Fatalf("the ledger's error: %q", recorded)
	}
}

// A sentinel actor whose check panics is restarted by its supervisor; the failed tick's
// findings are never seen, and the next tick works.
func TestPanickingSentinelIsRestarted(t *testing.T) {
	pool := pgtest.Pool(t)
	w := &woken{}
	e := &sentinels.Engine{Pool: pool, Wake: w.wake}
	var calls atomic.Int64
	s := plugins.Sentinel{ID: "test.panics", Period: 0, Check: func(context.Context) ([]plugins.Finding, error) {
		if calls.Add(1) == 1 {
			panic("the check broke")
		}
		return []plugins.Finding{{Key: "after", Severity: "urgent", OwnerLine: "found after the restart"}}, nil
	}}
	sys := actors.NewSystem(nil, nil)
	tree, err := supervisor.Build(sys, supervisor.Parts{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = sys.Shutdown(ctx)
	})
	if err := tree.Start(supervisor.Services{Sentinels: sentinels.Children(e, []plugins.Sentinel{s}, 20*time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	pgtest.Eventually(t, "a finding after the restart", func() bool {
		var n int
		_ = pool.QueryRow(context.Background(), `SELECT count(*) FROM core.sentinel_findings WHERE sentinel = 'test.panics'`).Scan(&n)
		return n == 1
	})
	restarts := 0
	for _, n := range sys.Tree() {
		if n.Path == "root/sentinels/test.panics" {
			restarts = n.Restarts
		}
	}
	if restarts < 1 {
		t.Fatalf("the sentinel's actor was not restarted: %+v", sys.Tree())
	}
	var failed string
	_ = pool.QueryRow(context.Background(), `SELECT error FROM core.sentinel_runs WHERE sentinel = 'test.panics' ORDER BY id LIMIT 1`).Scan(&failed)
	if failed != "panic: the check broke" {
		t.Fatalf("the first run's error: %q", failed)
	}
}

// A burst is one run: wakes wait a window for company (each pushes it back), never past the
// max wait; what the owner muted meanwhile leaves the run, and a run left with nothing is
// dropped; a report from a wake whose findings are all muted now is not delivered.
func TestCoalescedWakes(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	clk := &clock{t: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	var runs [][]string
	e := &sentinels.Engine{Pool: pool, Now: clk.now, Start: func(ctx context.Context, _ string, fs []plugins.Finding, claim conversation.Claim) (string, error) {
		var keys []string
		for _, f := range fs {
			keys = append(keys, f.Key)
		}
		runs = append(runs, keys)
		runID := "run-" + string(rune('a'+len(runs)-1))
		return runID, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return claim(ctx, tx, runID) })
	}}
	var current []plugins.Finding
	s := plugins.Sentinel{ID: "bank", Period: time.Minute, Coalesce: &plugins.Coalesce{Window: 2 * time.Minute, MaxWait: 10 * time.Minute},
		Check: func(context.Context) ([]plugins.Finding, error) { return current, nil }}
	urgent := func(key, kind string) plugins.Finding {
		return plugins.Finding{Key: key, Severity: "urgent", OwnerLine: key, Kind: kind, Subject: key}
	}
	flush := func() int {
		t.Helper()
		n, err := e.FlushWakes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	tick := func() {
		t.Helper()
		if _, err := e.Tick(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	current = []plugins.Finding{urgent("a", "charge")}
	tick()
	clk.add(time.Minute)
	current = append(current, urgent("b", "charge"))
	tick() // b joins; the wake is pushed to +3m
	clk.add(90 * time.Second)
	if flush() != 0 {
		t.Fatal("a wake ran before its window closed")
	}
	clk.add(time.Minute)
	if flush() != 1 || len(runs) != 1 || len(runs[0]) != 2 {
		t.Fatalf("the burst: %v", runs)
	}
	// Findings that keep arriving never hold a wake past the max wait.
	for i := 0; i < 8; i++ {
		current = []plugins.Finding{urgent(string(rune('c'+i)), "charge")}
		tick()
		clk.add(90 * time.Second)
		flush()
	}
	if len(runs) < 2 {
		t.Fatalf("a steady stream held its wake past the max wait: %v", runs)
	}
	// Muted before the wake runs: dropped.
	clk.add(10 * time.Minute)
	flush() // what the stream left waiting
	before := len(runs)
	current = []plugins.Finding{urgent("x", "fee")}
	tick()
	if err := e.Mute(ctx, "fee", ""); err != nil {
		t.Fatal(err)
	}
	clk.add(3 * time.Minute)
	flush()
	if len(runs) != before {
		t.Fatalf("a muted wake ran: %v", runs[before:])
	}
	// Muted after it ran: its report would not be delivered.
	e2 := &sentinels.Engine{Pool: pool, Now: clk.now, Start: e.Start}
	s2 := plugins.Sentinel{ID: "card", Period: time.Minute, Check: func(context.Context) ([]plugins.Finding, error) {
		return []plugins.Finding{urgent("y", "travel")}, nil
	}}
	if _, err := e2.Tick(ctx, s2); err != nil {
		t.Fatal(err)
	}
	last := "run-" + string(rune('a'+len(runs)-1))
	if muted, err := e2.AllMuted(ctx, last); err != nil || muted {
		t.Fatalf("before the mute: %v %v", muted, err)
	}
	if err := e2.Mute(ctx, "travel", "y"); err != nil {
		t.Fatal(err)
	}
	if muted, err := e2.AllMuted(ctx, last); err != nil || !muted {
		t.Fatalf("after the mute: %v %v", muted, err)
	}
}
