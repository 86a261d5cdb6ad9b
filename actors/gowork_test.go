package actors_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"buddi/actors"
	"buddi/actors/actorstest"
)

// A panic on the goroutine of a Go actor is the actor's failure: its
// supervisor restarts it, which runs the work again, and counts the restart;
// the process lives on.
func TestGoPanicIsAFailure(t *testing.T) {
	t.Parallel()
	b := setup(t)
	root := b.supervisor(t, nil, "root", generous)
	var runs atomic.Int32
	again := make(chan int32, 4)
	_, err := b.sys.Spawn(root, "poller", actors.Go("poller", func(ctx context.Context) error {
		n := runs.Add(1)
		again <- n
		if n == 1 {
			panic("the poll loop broke")
		}
		<-ctx.Done()
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	ev := b.nextEvent(t)
	if ev.Kind != actors.EventRestarted || ev.Child != "root/poller" || !strings.Contains(ev.Reason, "poller panicked: the poll loop broke") {
		t.Fatalf("event %+v: want the restart of root/poller for its panic", ev)
	}
	if !strings.Contains(ev.Reason, "gowork_test.go") {
		t.Errorf("reason %q: want the stack of the panic", ev.Reason)
	}
	for want := int32(1); want <= 2; want++ {
		select {
		case n := <-again:
			if n != want {
				t.Fatalf("run %d, want %d", n, want)
			}
		case <-time.After(actorstest.Timeout):
			t.Fatalf("the work did not run a %d. time", want)
		}
	}
	actorstest.Eventually(t, "root/poller restarted once and running", func() bool { n := b.node(t, "root/poller"); return n.Restarts == 1 && n.State == actors.StateRunning })
}

// A return of the work while the actor lives fails it, unless Quiet says the
// end leaves it idle; a stop cancels the work and waits for it.
func TestGoEnds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	root := b.supervisor(t, nil, "root", actors.Strategy{Kind: actors.OneForOne})
	revoked := errors.New("token revoked")
	_, err := b.sys.Spawn(root, "quiet", actors.Go("bot", func(ctx context.Context) error { return revoked },
		actors.Quiet(func(err error) bool { return errors.Is(err, revoked) })))
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	ref, err := b.sys.Spawn(root, "loop", actors.Go("loop", func(ctx context.Context) error {
		<-ctx.Done()
		close(stopped)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), actorstest.Timeout)
	defer cancel()
	if err := b.sys.Stop(ctx, ref); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	default:
		t.Fatal("Stop returned before the work saw its context end")
	}
	b.noEscalation(t)

	_, err = b.sys.Spawn(root, "failing", actors.Go("server", func(ctx context.Context) error { return errors.New("listener closed") }))
	if err != nil {
		t.Fatal(err)
	}
	ev := b.nextEvent(t)
	if ev.Child != "root/failing" || ev.Reason != "server ended: listener closed" || !ev.Escalated {
		t.Fatalf("event %+v: want root/failing stopped for its end, escalated (no budget)", ev)
	}
}

// A task (Finished) hands its result to the actor; only a panic fails it.
func TestGoFinished(t *testing.T) {
	t.Parallel()
	b := setup(t)
	root := b.supervisor(t, nil, "root", generous)
	results := make(chan error, 1)
	_, err := b.sys.Spawn(root, "task", actors.Go("task", func(ctx context.Context) error { return errors.New("done badly") },
		actors.Finished(func(c *actors.Context, err error) { results <- err })))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-results:
		if err == nil || err.Error() != "done badly" {
			t.Fatalf("result %v, want done badly", err)
		}
	case <-time.After(actorstest.Timeout):
		t.Fatal("no result")
	}
	if n := b.node(t, "root/task"); n.Restarts != 0 || n.State != actors.StateRunning {
		t.Fatalf("node %+v: a finished task stays, idle", n)
	}
}

// A restart waits out the budget's backoff, doubling inside the window; the
// tree says restarting meanwhile.
func TestBackoff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const backoff = 150 * time.Millisecond
	root := b.supervisor(t, nil, "root", actors.Strategy{Budget: actors.Budget{MaxRestarts: 5, Within: time.Minute, Backoff: backoff}})
	starts := make(chan time.Time, 8)
	_, err := b.sys.Spawn(root, "flaky", actors.Go("flaky", func(ctx context.Context) error {
		starts <- time.Now()
		return errors.New("the database is restarting")
	}))
	if err != nil {
		t.Fatal(err)
	}
	var times []time.Time
	for len(times) < 3 {
		select {
		case at := <-starts:
			times = append(times, at)
		case <-time.After(actorstest.Timeout):
			t.Fatalf("%d starts, want 3", len(times))
		}
	}
	if gap := times[1].Sub(times[0]); gap < backoff {
		t.Errorf("first restart after %s, want at least %s", gap, backoff)
	}
	if gap := times[2].Sub(times[1]); gap < 2*backoff {
		t.Errorf("second restart after %s, want at least %s (doubled)", gap, 2*backoff)
	}
	if s := (actors.Strategy{Budget: actors.Budget{MaxRestarts: 3, Within: time.Minute, Backoff: time.Second}}).String(); !strings.Contains(s, "backoff from 1s") {
		t.Errorf("strategy %q does not say its backoff", s)
	}
}

// conversationLike is a supervising actor: it spawns a child per "turn", and
// answers the turn's request when the child reports back, or when the child
// failed past its budget.
type conversationLike struct {
	waiting map[string]*actors.Reply
	failed  chan actors.ChildFailed
	crashes int32 // a child panics this many times before it answers
	runs    *atomic.Int32
}

type turnMsg struct{ name string }
type turnDone struct{ name string }
type crashSelf struct{}

func (a *conversationLike) Receive(c *actors.Context) {
	switch m := c.Message().(type) {
	case turnMsg:
		reply := c.Defer()
		a.waiting[m.name] = reply
		self, runs, crashes := c.Self(), a.runs, a.crashes
		name := m.name
		_, err := c.Spawn(m.name, actors.Go(m.name, func(ctx context.Context) error {
			if runs.Add(1) <= crashes {
				panic("the tool panicked")
			}
			return nil
		}, actors.Finished(func(cc *actors.Context, err error) { cc.Send(self, turnDone{name}) })))
		if err != nil {
			reply.Fail(err)
		}
	case turnDone:
		a.waiting[m.name].Answer("answered " + m.name)
		delete(a.waiting, m.name)
	case actors.ChildFailed:
		a.failed <- m
		name := m.Path[strings.LastIndex(m.Path, "/")+1:]
		a.waiting[name].Fail(errors.New("the turn crashed: " + m.Reason))
		delete(a.waiting, name)
	case crashSelf:
		panic("the conversation itself broke")
	}
}

// A supervising actor contains its children's failures: a child that panics is
// restarted within the budget, and past it the actor hears ChildFailed and
// lives on, with nothing escalated.
func TestSupervisingActorContainsItsChildren(t *testing.T) {
	t.Parallel()
	b := setup(t)
	root := b.supervisor(t, nil, "root", generous)
	var runs atomic.Int32
	failed := make(chan actors.ChildFailed, 1)
	conv := &conversationLike{waiting: map[string]*actors.Reply{}, failed: failed, crashes: 1, runs: &runs}
	ref, err := b.sys.SpawnSupervisor(root, "conv", actors.Strategy{Budget: actors.Budget{MaxRestarts: 2, Within: time.Minute}, Contain: true},
		func() actors.Actor { return conv })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), actorstest.Timeout)
	defer cancel()
	got, err := b.sys.Request(ctx, ref, turnMsg{"run1"})
	if err != nil || got != "answered run1" {
		t.Fatalf("turn 1: %v, %v; want it answered after one restart", got, err)
	}
	if n := b.node(t, "root/conv/run1"); n.Restarts != 1 {
		t.Errorf("run1 restarts %d, want 1", n.Restarts)
	}

	conv.crashes = 100 // every run panics from now on
	_, err = b.sys.Request(ctx, ref, turnMsg{"run2"})
	if err == nil || !strings.Contains(err.Error(), "the turn crashed") || !strings.Contains(err.Error(), "the tool panicked") {
		t.Fatalf("turn 2: %v; want it failed with the panic once the budget was spent", err)
	}
	fail := <-failed
	if fail.Path != "root/conv/run2" || fail.Restarts != 2 {
		t.Errorf("ChildFailed %+v: want root/conv/run2 after 2 restarts", fail)
	}
	b.noEscalation(t)
	if n := b.node(t, "root/conv"); n.State != actors.StateRunning || n.Restarts != 0 {
		t.Errorf("conversation %+v: want it running, never restarted", n)
	}
	actorstest.Eventually(t, "root/conv/run2 gone", func() bool { _, ok := actorstest.Find(b.sys.Tree(), "root/conv/run2"); return !ok })
}

// A request the actor took to answer later fails when the actor restarts
// before answering, and the actor's own children are not built again.
func TestDeferredRequestFailsOnRestart(t *testing.T) {
	t.Parallel()
	b := setup(t)
	root := b.supervisor(t, nil, "root", generous)
	var runs atomic.Int32
	runs.Store(-1 << 20) // children never finish: they block
	conv := &conversationLike{waiting: map[string]*actors.Reply{}, failed: make(chan actors.ChildFailed, 1), runs: &runs}
	ref, err := b.sys.SpawnSupervisor(root, "conv", actors.Strategy{Budget: actors.Budget{MaxRestarts: 2, Within: time.Minute}, Contain: true},
		func() actors.Actor {
			return &blockingConversation{conversationLike: conv}
		})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), actorstest.Timeout)
	defer cancel()
	errs := make(chan error, 1)
	go func() { _, err := b.sys.Request(ctx, ref, turnMsg{"run1"}); errs <- err }()
	actorstest.Eventually(t, "root/conv/run1 spawned", func() bool { _, ok := actorstest.Find(b.sys.Tree(), "root/conv/run1"); return ok })
	b.sys.Send(ref, crashSelf{})
	select {
	case err := <-errs:
		if !errors.Is(err, actors.ErrNotRunning) || !strings.Contains(err.Error(), "restarted before answering") {
			t.Fatalf("request: %v; want ErrNotRunning for the restart", err)
		}
	case <-ctx.Done():
		t.Fatal("the deferred request was never answered")
	}
	actorstest.Eventually(t, "the conversation restarted without its run", func() bool {
		n, ok := actorstest.Find(b.sys.Tree(), "root/conv")
		_, child := actorstest.Find(b.sys.Tree(), "root/conv/run1")
		return ok && n.Restarts == 1 && n.State == actors.StateRunning && !child
	})
}

// blockingConversation spawns children that block until stopped.
type blockingConversation struct{ *conversationLike }

func (a *blockingConversation) Receive(c *actors.Context) {
	if m, ok := c.Message().(turnMsg); ok {
		a.waiting[m.name] = c.Defer()
		if _, err := c.Spawn(m.name, actors.Go(m.name, func(ctx context.Context) error { <-ctx.Done(); return nil })); err != nil {
			panic(err)
		}
		return
	}
	a.conversationLike.Receive(c)
}
