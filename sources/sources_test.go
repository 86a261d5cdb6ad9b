package sources_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/actors"
	"buddi/core/conversation"
	"buddi/core/notify"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/sources"
	"buddi/supervisor"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// clock is an injected clock that counts how often it is read: a source's actor reads it at
// each look at its ledger, so a test can wait for looks instead of sleeping.
type clock struct {
	mu    sync.Mutex
	t     time.Time
	reads atomic.Int64
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.reads.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// waitLooks waits until the clock was read n more times: the actor looked again and again.
func (c *clock) waitLooks(t *testing.T, n int64) {
	t.Helper()
	from := c.reads.Load()
	pgtest.Eventually(t, "the source's actor to look at its ledger again", func() bool { return c.reads.Load() >= from+n })
}

type bundle struct {
	pool   *pgxpool.Pool
	clock  *clock
	lines  *lines
	engine *sources.Engine
}

// setup builds an engine on a fresh database whose runs are real detached conversations
// (their run jobs are left out: no runner here) and whose notices are real rows.
func setup(t *testing.T) *bundle {
	t.Helper()
	pool := pgtest.Pool(t)
	b := &bundle{pool: pool, clock: newClock(), lines: &lines{dir: t.TempDir()}}
	convs := conversation.NewStore(pool)
	notices := &notify.Notifier{Pool: pool}
	b.engine = &sources.Engine{Pool: pool, Now: b.clock.now,
		Start: func(ctx context.Context, _, agent, prompt string, claim conversation.Claim) (string, error) {
			sent, err := convs.StartDetached(ctx, agent, prompt, func(context.Context, pgx.Tx, conversation.Conversation, string) error { return nil }, claim)
			return sent.RunID, err
		},
		Tell: func(ctx context.Context, n notify.Notice) {
			if _, err := notices.Owner(ctx, n); err != nil {
				t.Errorf("tell the owner: %v", err)
			}
		},
	}
	return b
}

func (b *bundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// runs counts the reader's detached conversations: one per run a source started.
func (b *bundle) runs(t *testing.T) int {
	return b.count(t, `SELECT count(*) FROM core.conversations WHERE agent = 'reader' AND surface = $1`, conversation.SurfaceMission)
}

// start runs the sources' actors under root/sources, looking every 10 ms.
func (b *bundle) start(t *testing.T, list ...plugins.Source) *actors.System {
	t.Helper()
	sys := actors.NewSystem(nil, nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = sys.Shutdown(ctx)
	})
	tree, err := supervisor.Build(sys, supervisor.Parts{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tree.Start(supervisor.Services{Sources: sources.Children(b.engine, list, 10*time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	return sys
}

func node(sys *actors.System, path string) (actors.Node, bool) {
	for _, n := range sys.Tree() {
		if n.Path == path {
			return n, true
		}
	}
	return actors.Node{}, false
}

// After a sleep of three periods a source polls once, not three times, and its next poll is
// a period after that one: the ledger says when it is due, not a timer.
func TestCatchUpIsOnePoll(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	src := b.lines.source()
	if due, _, err := b.engine.Due(ctx, src); err != nil || !due {
		t.Fatalf("a source that never polled: due %v, %v; want due", due, err)
	}
	if _, err := b.engine.Tick(ctx, src); err != nil {
		t.Fatal(err)
	}
	if due, next, err := b.engine.Due(ctx, src); err != nil || due || !next.Equal(b.clock.now().Add(time.Hour)) {
		t.Fatalf("just polled: due %v at %v, %v; want not due until a period on", due, next, err)
	}

	b.clock.add(3 * time.Hour) // the machine slept through three periods
	sys := b.start(t, src)
	pgtest.Eventually(t, "the catch-up poll", func() bool { return b.lines.polls.Load() == 2 })
	b.clock.waitLooks(t, 20)
	if n := b.lines.polls.Load(); n != 2 {
		t.Fatalf("%d polls after three missed periods; want one catch-up poll", n-1)
	}
	if _, next, _ := b.engine.Due(ctx, src); !next.Equal(b.clock.now().Add(time.Hour)) {
		t.Errorf("next due %v; want a period after the catch-up", next)
	}
	if n, ok := node(sys, "root/sources/lines.inbox"); !ok || n.State != "running" {
		t.Errorf("root/sources/lines.inbox = %+v, %v; want a running actor", n, ok)
	}
	if n, ok := node(sys, "root/sources"); !ok || !n.Supervisor || n.Strategy != supervisor.SourcesStrategy.String() {
		t.Errorf("root/sources = %+v, %v; want a supervisor with the sources' strategy", n, ok)
	}
}

// A poll that enqueued and then crashed before its commit polls again and enqueues the same
// keys: no second run. Two enqueues of one key at the same moment start one run.
func TestEnqueueIsIdempotentOnItsKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	src := b.lines.source()
	b.lines.write("pay the rent\ncall Ann\n")
	b.lines.crash.Store(true)
	if n, err := b.engine.Tick(ctx, src); err == nil || n != 2 {
		t.Fatalf("the crashing poll: %d runs, %v; want 2 and its crash", n, err)
	}
	if n, err := b.engine.Tick(ctx, src); err != nil || n != 0 {
		t.Fatalf("the poll after the crash: %d runs, %v; want none new", n, err)
	}
	if got := b.runs(t); got != 2 {
		t.Fatalf("%d runs for two lines polled twice; want 2", got)
	}
	b.lines.write("water the plants\n")
	if n, err := b.engine.Tick(ctx, src); err != nil || n != 1 {
		t.Fatalf("a new line: %d runs, %v; want 1", n, err)
	}
	var prompt string
	if err := b.pool.QueryRow(ctx, `SELECT e.body->>'text' FROM core.source_enqueues s
		JOIN core.conversations c ON c.active_run = s.run_id::uuid JOIN core.messages e ON e.conversation_id = c.id AND e.kind = 'user'
		WHERE s.source = 'lines.inbox' AND s.dedup_key = 'water the plants'`).Scan(&prompt); err != nil || prompt != "Handle this line: water the plants" {
		t.Errorf("the run's first turn = %q, %v", prompt, err)
	}

	race := plugins.Source{ID: "lines.race", Period: time.Hour, Poll: func(ctx context.Context, enqueue plugins.EnqueueRun) error {
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() { errs <- enqueue(ctx, "reader", "Handle this line: same", "same") })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}}
	if n, err := b.engine.Tick(ctx, race); err != nil || n != 1 {
		t.Fatalf("four enqueues of one key at once: %d runs, %v; want 1", n, err)
	}
	if got := b.runs(t); got != 4 {
		t.Errorf("%d runs in all; want 4", got)
	}
	bad := plugins.Source{ID: "lines.bad", Period: time.Hour, Poll: func(ctx context.Context, enqueue plugins.EnqueueRun) error {
		return enqueue(ctx, "reader", "no key", "")
	}}
	if _, err := b.engine.Tick(ctx, bad); err == nil || !strings.Contains(err.Error(), "dedup key") {
		t.Errorf("an enqueue without a key: %v", err)
	}
}

// A failing poll records its first line as the sentence, backs off (doubling), and after
// three failures in a row the owner is told once; a success ends the streak, and the next
// streak is told again.
func TestFailuresBackOffAndTellTheOwnerOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	src := b.lines.source()
	broken := errors.New("the inbox is not readable: permission denied\n\tat a stack line")
	b.lines.fail.Store(&broken)
	notices := func() int {
		return b.count(t, `SELECT count(*) FROM core.owner_notifications WHERE kind = 'source' AND urgency = 'normal'`)
	}
	for i, wait := range []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute} {
		if _, err := b.engine.Tick(ctx, src); err == nil {
			t.Fatal("a failing poll reported no error")
		}
		due, next, err := b.engine.Due(ctx, src)
		if err != nil || due || !next.Equal(b.clock.now().Add(wait)) {
			t.Fatalf("after failure %d: due %v at %v, %v; want a backoff of %v", i+1, due, next, err, wait)
		}
		want := 0
		if i+1 >= 3 {
			want = 1 // told at the third, and not again
		}
		if got := notices(); got != want {
			t.Fatalf("after failure %d: %d notices; want %d", i+1, got, want)
		}
		b.clock.add(wait)
	}
	var state, sentence string
	if err := b.pool.QueryRow(ctx, `SELECT state, error FROM core.source_runs WHERE source = 'lines.inbox' ORDER BY id DESC LIMIT 1`).Scan(&state, &sentence); err != nil {
		t.Fatal(err)
	}
	if state != "failed" || sentence != "the inbox is not readable: permission denied" {
		t.Errorf("the ledger says %s, %q; want failed with the first line", state, sentence)
	}
	var title, body string
	if err := b.pool.QueryRow(ctx, `SELECT title, body FROM core.owner_notifications WHERE kind = 'source'`).Scan(&title, &body); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(title, "lines.inbox") || !strings.Contains(body, "3 times in a row") || !strings.Contains(body, "permission denied") || strings.Contains(body, "stack") {
		t.Errorf("the notice: %q / %q", title, body)
	}

	b.lines.fail.Store(nil)
	if _, err := b.engine.Tick(ctx, src); err != nil {
		t.Fatal(err)
	}
	if due, next, _ := b.engine.Due(ctx, src); due || !next.Equal(b.clock.now().Add(time.Hour)) {
		t.Fatalf("after a success: due %v at %v; want a period on", due, next)
	}
	b.lines.fail.Store(&broken)
	for range 3 {
		b.clock.add(2 * time.Hour)
		_, _ = b.engine.Tick(ctx, src)
	}
	if n := notices(); n != 2 {
		t.Errorf("%d notices after a second streak; want 2 (one per streak)", n)
	}
}

// While buddi is paused a due source polls nothing; resumed, it polls.
func TestPausedPollsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if _, err := b.pool.Exec(ctx, `INSERT INTO core.system_flags (key, value) VALUES ('paused', '{}')`); err != nil {
		t.Fatal(err)
	}
	src := b.lines.source()
	if due, _, err := b.engine.Due(ctx, src); err != nil || due {
		t.Fatalf("paused: due %v, %v", due, err)
	}
	b.start(t, src)
	b.clock.waitLooks(t, 20)
	if n := b.lines.polls.Load(); n != 0 {
		t.Fatalf("%d polls while paused", n)
	}
	st, err := b.engine.Statuses(ctx, []sources.Entry{{Plugin: "lines", Source: src}})
	if err != nil || len(st) != 1 || !st[0].Paused || st[0].State != "never" || st[0].Plugin != "lines" {
		t.Fatalf("statuses while paused: %+v, %v", st, err)
	}
	if _, err := b.pool.Exec(ctx, `DELETE FROM core.system_flags WHERE key = 'paused'`); err != nil {
		t.Fatal(err)
	}
	pgtest.Eventually(t, "a poll after resuming", func() bool { return b.lines.polls.Load() == 1 })
}

// A poll that panics is recorded as a failure and its actor is started again by root/sources;
// the restarted actor waits for the backoff the ledger gives.
func TestPanickingPollRestartsItsActor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.engine.Now = nil // the real clock: the backoff is what brings the next poll
	b.engine.Backoff = 20 * time.Millisecond
	b.lines.panics.Store(true)
	b.lines.write("after the restart\n")
	sys := b.start(t, b.lines.source())
	pgtest.Eventually(t, "the run after the restart", func() bool { return b.runs(t) == 1 })
	if n, ok := node(sys, "root/sources/lines.inbox"); !ok || n.Restarts < 1 {
		t.Errorf("root/sources/lines.inbox = %+v; want it restarted", n)
	}
	var first string
	_ = b.pool.QueryRow(context.Background(), `SELECT error FROM core.source_runs WHERE source = 'lines.inbox' ORDER BY id LIMIT 1`).Scan(&first)
	if first != "the poll panicked: the inbox reader broke" {
		t.Errorf("the first poll's sentence: %q", first)
	}
}

// Of refuses what cannot run: no id, no period, no poll, and one id twice.
func TestOfRefusesBrokenSources(t *testing.T) {
	t.Parallel()
	poll := func(context.Context, plugins.EnqueueRun) error { return nil }
	ok := plugins.Source{ID: "a.one", Period: time.Minute, Poll: poll}
	tests := []struct {
		name    string
		sources []plugins.Source
		want    string
	}{
		{"no id", []plugins.Source{{Period: time.Minute, Poll: poll}}, "has no id"},
		{"no period", []plugins.Source{{ID: "a.x", Poll: poll}}, "has no period"},
		{"no poll", []plugins.Source{{ID: "a.x", Period: time.Minute}}, "has no poll"},
		{"twice", []plugins.Source{ok, ok}, "already"},
		{"fine", []plugins.Source{ok}, ""},
	}
	for _, tt := range tests {
		_, err := sources.Of([]plugins.Manifest{{Name: "a", Sources: tt.sources}})
		if got := ""; err != nil {
			got = err.Error()
			if tt.want == "" || !strings.Contains(got, tt.want) {
				t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
			}
		} else if tt.want != "" {
			t.Errorf("%s: got no error, want %q", tt.name, tt.want)
		}
	}
}

// A poll that outlives PollTimeout is cut off and fails with a sentence that says so.
func TestSlowPollIsCutOff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.engine.PollTimeout = 50 * time.Millisecond
	slow := plugins.Source{ID: "lines.slow", Period: time.Hour, Poll: func(ctx context.Context, _ plugins.EnqueueRun) error {
		<-ctx.Done()
		return ctx.Err()
	}}
	if _, err := b.engine.Tick(context.Background(), slow); err == nil {
		t.Fatal("a poll cut off reported no error")
	}
	var sentence string
	_ = b.pool.QueryRow(context.Background(), `SELECT error FROM core.source_runs WHERE source = 'lines.slow'`).Scan(&sentence)
	if sentence != "the poll took longer than 50ms (context deadline exceeded)" {
		t.Errorf("the sentence: %q", sentence)
	}
}
