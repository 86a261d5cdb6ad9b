package supervisor_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"buddi/actors"
	"buddi/actors/actorstest"
	"buddi/supervisor"
)

func waitErr(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(actorstest.Timeout):
		t.Fatal("the turn did not end")
		return nil
	}
}

// A conversation's turns run one at a time, in the order they reached its actor, each as a
// run actor under the conversation's.
func TestConversationTurnsRunOneAtATime(t *testing.T) {
	t.Parallel()
	sys, tree, _ := newTree(t)
	h := supervisor.NewConversationHost(sys, tree)
	ctx := context.Background()

	release := make(chan struct{})
	inFirst := make(chan struct{})
	var order []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	first := make(chan error, 1)
	go func() {
		first <- h.Run(ctx, "c1", "r1", func(ctx context.Context) error {
			note("r1 start")
			close(inFirst)
			<-release
			note("r1 end")
			return nil
		})
	}()
	<-inFirst
	if _, ok := node(sys, "root/conversations/c1/r1.1"); !ok {
		t.Fatalf("no run actor under the conversation: %+v", sys.Tree())
	}
	second := make(chan error, 1)
	go func() {
		second <- h.Run(ctx, "c1", "r2", func(ctx context.Context) error { note("r2"); return nil })
	}()
	// r2 waits in the conversation's mailbox while r1 runs.
	actorstest.Eventually(t, "r2 queued", func() bool { return h.Open() == 1 })
	select {
	case err := <-second:
		t.Fatalf("r2 ended (%v) while r1 still ran", err)
	default:
	}
	close(release)
	if err := waitErr(t, first); err != nil {
		t.Fatal(err)
	}
	if err := waitErr(t, second); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, ","); got != "r1 start,r1 end,r2" {
		t.Fatalf("order %s", got)
	}
}

// A panic in a run's code is its actor's crash: the conversation restarts it (the event says
// so) and the turn answers; past the budget the turn fails with a CrashError and the
// conversation answers the next turn.
func TestRunPanicIsACrashTheConversationSurvives(t *testing.T) {
	t.Parallel()
	sys, tree, events := newTree(t)
	h := supervisor.NewConversationHost(sys, tree)
	ctx := context.Background()

	var tries atomic.Int32
	again := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- h.Run(ctx, "c1", "r1", func(ctx context.Context) error {
			if tries.Add(1) == 1 {
				panic("the provider adapter broke")
			}
			close(again)
			<-release
			return nil
		})
	}()
	<-again
	// What /api/health shows during the turn: the conversation's actor and its run's, the
	// run restarted once.
	if n, ok := node(sys, "root/conversations/c1/r1.1"); !ok || n.Restarts != 1 || n.State != actors.StateRunning {
		t.Errorf("run node %+v (%v): want it running after one restart", n, ok)
	}
	if n, ok := node(sys, "root/conversations/c1"); !ok || !n.Supervisor || n.Restarts != 0 {
		t.Errorf("conversation node %+v (%v): want the conversation's actor, never restarted", n, ok)
	}
	close(release)
	if err := waitErr(t, done); err != nil || tries.Load() != 2 {
		t.Fatalf("Run = %v after %d tries; want it answered on the restart", err, tries.Load())
	}
	ev := events.Next(t)
	if ev.Kind != actors.EventRestarted || ev.Child != "root/conversations/c1/r1.1" || !strings.Contains(ev.Reason, "the provider adapter broke") {
		t.Fatalf("event %+v: want the run's restart for its panic", ev)
	}

	err := h.Run(ctx, "c1", "r2", func(ctx context.Context) error { panic("a tool broke") })
	var crash *supervisor.CrashError
	if !errors.As(err, &crash) || crash.Run != "r2" || crash.Restarts != supervisor.RunStrategy.Budget.MaxRestarts || !strings.Contains(crash.Reason, "a tool broke") {
		t.Fatalf("Run = %v; want a CrashError for r2 after %d restarts", err, supervisor.RunStrategy.Budget.MaxRestarts)
	}
	if err := h.Run(ctx, "c1", "r3", func(ctx context.Context) error { return nil }); err != nil {
		t.Fatalf("the conversation after a crashed run: %v", err)
	}
	if n, ok := node(sys, "root/conversations/c1"); !ok || n.Restarts != 0 || n.State != actors.StateRunning {
		t.Fatalf("conversation node %+v (%v): want it running, never restarted", n, ok)
	}
	select {
	case ev := <-sys.Escalations():
		t.Fatalf("escalated: %+v", ev)
	default:
	}
}

// Stop cancels the running turn with its cause, and only that turn.
func TestStopCancelsTheRunningTurn(t *testing.T) {
	t.Parallel()
	sys, tree, _ := newTree(t)
	h := supervisor.NewConversationHost(sys, tree)
	cause := errors.New("the owner pressed stop")
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- h.Run(context.Background(), "c1", "r1", func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			return context.Cause(ctx)
		})
	}()
	<-started
	if h.Stop("c1", "r2", cause) {
		t.Fatal("Stop of a run that is not running reported true")
	}
	if !h.Stop("c1", "r1", cause) {
		t.Fatal("Stop of the running run reported false")
	}
	if err := waitErr(t, done); !errors.Is(err, cause) {
		t.Fatalf("the turn ended with %v, want the stop's cause", err)
	}
}

// A conversation with nothing to do leaves the tree, and its next message builds it again.
func TestIdleConversationIsPassivated(t *testing.T) {
	t.Parallel()
	sys, tree, _ := newTree(t)
	h := supervisor.NewConversationHost(sys, tree)
	h.Idle = 20 * time.Millisecond
	ctx := context.Background()
	for round := range 3 {
		if err := h.Run(ctx, "c1", fmt.Sprintf("r%d", round), func(ctx context.Context) error { return nil }); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		actorstest.Eventually(t, "the conversation passivated", func() bool {
			_, inTree := node(sys, "root/conversations/c1")
			return h.Open() == 0 && !inTree
		})
	}
}

// A cancelled job ends its wait and its turn, also while the turn waits behind another.
func TestCancelledJobLeavesTheQueue(t *testing.T) {
	t.Parallel()
	sys, tree, _ := newTree(t)
	h := supervisor.NewConversationHost(sys, tree)
	release := make(chan struct{})
	started := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- h.Run(context.Background(), "c1", "r1", func(ctx context.Context) error { close(started); <-release; return nil })
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Bool
	second := make(chan error, 1)
	go func() {
		second <- h.Run(ctx, "c1", "r2", func(ctx context.Context) error { ran.Store(true); return nil })
	}()
	cancel()
	if err := waitErr(t, second); !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled turn: %v", err)
	}
	close(release)
	if err := waitErr(t, first); err != nil {
		t.Fatal(err)
	}
	if err := h.Run(context.Background(), "c1", "r3", func(ctx context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if ran.Load() {
		t.Fatal("a turn whose job gave up ran anyway")
	}
}

// BenchmarkPassivatedConversations opens 10,000 conversations, each answering one turn, lets
// them passivate, and reports the heap they leave behind per conversation.
func BenchmarkPassivatedConversations(b *testing.B) {
	const n = 10_000
	for range b.N {
		sys := actors.NewSystem(nil, nil)
		tree, err := supervisor.Build(sys, supervisor.Parts{})
		if err != nil {
			b.Fatal(err)
		}
		h := supervisor.NewConversationHost(sys, tree)
		h.Idle = 10 * time.Millisecond
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		b.ReportMetric(float64(rssKB())/1024, "rss-MB-before")
		var wg sync.WaitGroup
		sem := make(chan struct{}, 64)
		for i := range n {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if err := h.Run(context.Background(), fmt.Sprintf("c%d", i), "r", func(ctx context.Context) error { return nil }); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		actorstest.Eventually(b, "every conversation passivated", func() bool { return h.Open() == 0 })
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(h.Open()), "open-after")
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "heap-B/conversation")
		b.ReportMetric(float64(len(sys.Tree())), "tree-nodes")
		debug.FreeOSMemory() // what the runtime freed but kept goes back: the RSS is what is held
		b.ReportMetric(float64(rssKB())/1024, "rss-MB-after")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_ = sys.Shutdown(ctx)
		cancel()
	}
}

// A delivered turn starts at once; its job, coming later, joins it while it runs or takes its
// result once it has ended, and the turn runs once. A later attempt of the job (a retry)
// runs it again.
func TestDeliveredTurnIsJoinedByItsJob(t *testing.T) {
	t.Parallel()
	sys, tree, _ := newTree(t)
	h := supervisor.NewConversationHost(sys, tree)
	ctx := context.Background()

	var runs atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	turn := func(ctx context.Context) error {
		runs.Add(1)
		started <- struct{}{}
		<-release
		return errors.New("the model is down")
	}
	if err := h.Deliver("c1", "r1", time.Minute, turn); err != nil {
		t.Fatal(err)
	}
	<-started // running before any job asked for it
	joined := make(chan error, 1)
	go func() { joined <- h.Join(ctx, "c1", "r1", turn) }()
	close(release) // the job joins the running turn, or takes its result once it has ended
	if err := waitErr(t, joined); err == nil || err.Error() != "the model is down" {
		t.Fatalf("the job got %v, want the delivered turn's result", err)
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("the turn ran %d times, want 1", n)
	}

	// Delivered, ended unawaited: the job takes the result; a retry of the job runs anew.
	done := make(chan struct{})
	if err := h.Deliver("c1", "r2", time.Minute, func(context.Context) error { defer close(done); runs.Add(1); return errors.New("first attempt failed") }); err != nil {
		t.Fatal(err)
	}
	<-done
	var err error
	actorstest.Eventually(t, "the result kept for the job", func() bool {
		err = h.Join(ctx, "c1", "r2", func(context.Context) error { runs.Add(1); return nil })
		return err != nil
	})
	if err.Error() != "first attempt failed" || runs.Load() != 2 {
		t.Fatalf("the job got %v after %d runs; want the delivered turn's failure, run once", err, runs.Load())
	}
	if err := h.Join(ctx, "c1", "r2", func(context.Context) error { runs.Add(1); return nil }); err != nil || runs.Load() != 3 {
		t.Fatalf("the retry: %v after %d runs; want it run anew", err, runs.Load())
	}
}

// A resumption of a run is a turn of its own: it never joins the run's first turn, even while
// that one still runs; it waits behind it.
func TestResumptionIsNotTheFirstTurn(t *testing.T) {
	t.Parallel()
	sys, tree, _ := newTree(t)
	h := supervisor.NewConversationHost(sys, tree)
	ctx := context.Background()
	release := make(chan struct{})
	started := make(chan struct{})
	if err := h.Deliver("c1", "r1", time.Minute, func(context.Context) error { close(started); <-release; return nil }); err != nil {
		t.Fatal(err)
	}
	<-started
	var resumed atomic.Bool
	done := make(chan error, 1)
	go func() {
		done <- h.Run(ctx, "c1", "r1", func(context.Context) error { resumed.Store(true); return nil })
	}()
	close(release)
	if err := waitErr(t, done); err != nil || !resumed.Load() {
		t.Fatalf("the resumption: %v, ran %v; want it run after the first turn", err, resumed.Load())
	}
}

// rssKB is this process's resident set, from /proc/self/status; 0 where there is none.
func rssKB() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb
		}
	}
	return 0
}
