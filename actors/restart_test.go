package actors_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"buddi/actors"
	"buddi/actors/actorstest"
)

// A panicking worker is restarted by its supervisor as a new instance, which
// gets Started again; every restart is an event and counts in Tree. One-for-one
// restarts the failed child only, all-for-one all its siblings too.
func TestRestart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		kind      actors.StrategyKind
		restarted []string // when root/b fails
	}{
		{"all-for-one", actors.AllForOne, []string{"root/a", "root/b", "root/c"}},
		{"one-for-one", actors.OneForOne, []string{"root/b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			root := b.supervisor(t, nil, "root", actors.Strategy{Kind: tt.kind, Budget: actors.Budget{MaxRestarts: 3, Within: time.Minute}})
			instance := map[string]int64{}
			refs := map[string]*actors.Ref{}
			for _, name := range []string{"a", "b", "c"} {
				ref, inst := b.spawnInstance(t, root, name)
				refs[ref.Path()], instance[ref.Path()] = ref, inst
			}

			for round := 1; round <= 2; round++ {
				b.sys.Send(refs["root/b"], actorstest.Crash{Reason: "boom"})
				want := actors.SupervisorEvent{Kind: actors.EventRestarted, Supervisor: "root", Child: "root/b", Reason: "boom", Restarts: round}
				if got := b.nextEvent(t); got != want {
					t.Fatalf("round %d: got event %+v, want %+v", round, got, want)
				}
				// Each restarted child: Restarting{boom} to the old instance,
				// then Started to a new one.
				waiting := slices.Clone(tt.restarted)
				for len(waiting) > 0 {
					s := b.probe.Next(t)
					switch m := s.Msg.(type) {
					case actorstest.Crash:
					case actors.Restarting:
						if m.Reason != "boom" || s.Instance != instance[s.Path] {
							t.Errorf("%s: got Restarting %+v on instance %d, want reason boom on %d", s.Path, m, s.Instance, instance[s.Path])
						}
					case actors.Started:
						if s.Instance == instance[s.Path] {
							t.Errorf("%s: Started again on the old instance %d", s.Path, s.Instance)
						}
						if !slices.Contains(waiting, s.Path) {
							t.Fatalf("%s restarted, want only %v", s.Path, tt.restarted)
						}
						instance[s.Path] = s.Instance
						waiting = slices.DeleteFunc(waiting, func(p string) bool { return p == s.Path })
					default:
						t.Fatalf("%s: unexpected %#v", s.Path, s.Msg)
					}
				}
			}
			for path := range refs {
				want := 0
				if slices.Contains(tt.restarted, path) {
					want = 2
				}
				if n := b.node(t, path); n.Restarts != want || n.State != actors.StateRunning {
					t.Errorf("%s: got %d restarts, state %s; want %d, running", path, n.Restarts, n.State, want)
				}
			}
			b.noEscalation(t)
		})
	}
}

// Failures further apart than the budget's window never add up.
func TestBudgetWindow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const within = 30 * time.Millisecond
	root := b.supervisor(t, nil, "root", actors.Strategy{Budget: actors.Budget{MaxRestarts: 1, Within: within}})
	w := b.spawn(t, root, "w")
	for i := range 4 {
		b.sys.Send(w, actorstest.Crash{Reason: "boom"})
		ev := b.events.Next(t)
		if ev.Kind != actors.EventRestarted || ev.Restarts != 1 {
			t.Fatalf("failure %d: got %+v, want a restart with 1 restart in the window", i+1, ev)
		}
		b.probe.WaitFor(t, "root/w", actors.Started{})
		// Let the window pass: elapsed time is what this test is about,
		// not a wait for something asynchronous.
		time.Sleep(time.Until(ev.At.Add(within)))
	}
	if n := b.node(t, "root/w"); n.Restarts != 4 {
		t.Errorf("got %d restarts, want 4", n.Restarts)
	}
}

// panicker panics with value on the message "fail".
type panicker struct{ value any }

func (p panicker) Receive(c *actors.Context) {
	if c.Message() == "fail" {
		panic(p.value)
	}
}

// Whatever a Receive panics with, the process lives and the supervisor
// restarts the actor, reporting the value as text.
func TestPanicValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		value any
		want  string
	}{
		{"error", errors.New("an error"), "an error"},
		{"int", 42, "42"},
		{"string", "text", "text"},
		{"struct", struct{ Code int }{7}, "{7}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			root := b.supervisor(t, nil, "root", generous)
			w, err := b.sys.Spawn(root, "w", func() actors.Actor { return panicker{tt.value} })
			if err != nil {
				t.Fatal(err)
			}
			b.sys.Send(w, "fail")
			want := actors.SupervisorEvent{Kind: actors.EventRestarted, Supervisor: "root", Child: "root/w", Reason: tt.want, Restarts: 1}
			if got := b.nextEvent(t); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			actorstest.Eventually(t, "root/w restarted and running", func() bool {
				n := b.node(t, "root/w")
				return n.Restarts == 1 && n.State == actors.StateRunning
			})
		})
	}
}

// A producer that panics fails the child it builds, not its parent: the
// child is restarted per budget, then stopped and escalated.
func TestProducerPanics(t *testing.T) {
	t.Parallel()
	b := setup(t)
	root := b.supervisor(t, nil, "root", actors.Strategy{Budget: actors.Budget{MaxRestarts: 2, Within: time.Minute}})
	if _, err := b.sys.Spawn(root, "w", func() actors.Actor { panic("no config") }); err != nil {
		t.Fatal(err)
	}
	const reason = "produce root/w: no config"
	want := []actors.SupervisorEvent{
		{Kind: actors.EventRestarted, Supervisor: "root", Child: "root/w", Reason: reason, Restarts: 1},
		{Kind: actors.EventRestarted, Supervisor: "root", Child: "root/w", Reason: reason, Restarts: 2},
		{Kind: actors.EventStopped, Supervisor: "root", Child: "root/w", Reason: reason, Restarts: 2, Escalated: true},
		{Kind: actors.EventStopped, Child: "root", Reason: reason, Escalated: true},
	}
	for i, w := range want {
		if got := b.nextEvent(t); got != w {
			t.Errorf("event %d: got %+v, want %+v", i, got, w)
		}
	}
	if ev := <-b.sys.Escalations(); ev.Child != "root" || !strings.Contains(ev.Reason, "no config") {
		t.Errorf("got escalation %+v, want root with the producer's panic", ev)
	}
}

// stopPanicker panics on every lifecycle message of a shutdown.
type stopPanicker struct{}

func (stopPanicker) Receive(c *actors.Context) {
	switch c.Message().(type) {
	case actors.Drain, actors.Stopping, actors.Stopped:
		panic("while shutting down")
	}
}

// A panic while draining or stopping is logged and ignored: the stop
// completes and Shutdown does not hang.
func TestPanicWhileStopping(t *testing.T) {
	t.Parallel()
	b := setup(t)
	root := b.supervisor(t, nil, "root", generous)
	if _, err := b.sys.Spawn(root, "w", func() actors.Actor { return stopPanicker{} }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), actorstest.Timeout)
	defer cancel()
	if err := b.sys.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if !b.allStopped() {
		t.Errorf("got %+v, want every node stopped", b.sys.Tree())
	}
}
