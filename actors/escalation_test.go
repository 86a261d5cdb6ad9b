package actors_test

import (
	"testing"
	"time"

	"buddi/actors"
	"buddi/actors/actorstest"
)

// chain builds supervisors "s0/s1/…" with the given strategies, a probe worker
// "w" under the last one, and returns the worker and its first instance.
func (b *testBundle) chain(t *testing.T, strategies ...actors.Strategy) (*actors.Ref, int64) {
	t.Helper()
	var parent *actors.Ref
	for i, st := range strategies {
		parent = b.supervisor(t, parent, "s"+string(rune('0'+i)), st)
	}
	return b.spawnInstance(t, parent, "w")
}

func budget(n int) actors.Strategy {
	return actors.Strategy{Budget: actors.Budget{MaxRestarts: n, Within: time.Minute}}
}

// An exhausted budget stops the child and escalates the failure to the
// supervisor's parent, which applies its own strategy to the supervisor:
// restarting it rebuilds the whole subtree from its producers.
func TestBudgetEscalates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		strategies []actors.Strategy
		crashes    int
		want       []actors.SupervisorEvent
		restarts   map[string]int
	}{
		{
			name:       "parent restarts the supervisor",
			strategies: []actors.Strategy{generous, budget(1)},
			crashes:    2,
			want: []actors.SupervisorEvent{
				{Kind: actors.EventRestarted, Supervisor: "s0/s1", Child: "s0/s1/w", Reason: "boom", Restarts: 1},
				{Kind: actors.EventStopped, Supervisor: "s0/s1", Child: "s0/s1/w", Reason: "boom", Restarts: 1, Escalated: true},
				{Kind: actors.EventRestarted, Supervisor: "s0", Child: "s0/s1", Reason: "boom", Restarts: 1},
			},
			restarts: map[string]int{"s0": 0, "s0/s1": 1, "s0/s1/w": 1},
		},
		{
			name:       "parent stops the supervisor, grandparent restarts the parent",
			strategies: []actors.Strategy{generous, budget(0), budget(0)},
			crashes:    1,
			want: []actors.SupervisorEvent{
				{Kind: actors.EventStopped, Supervisor: "s0/s1/s2", Child: "s0/s1/s2/w", Reason: "boom", Escalated: true},
				{Kind: actors.EventStopped, Supervisor: "s0/s1", Child: "s0/s1/s2", Reason: "boom", Escalated: true},
				{Kind: actors.EventRestarted, Supervisor: "s0", Child: "s0/s1", Reason: "boom", Restarts: 1},
			},
			restarts: map[string]int{"s0": 0, "s0/s1": 1, "s0/s1/s2": 0, "s0/s1/s2/w": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			w, first := b.chain(t, tt.strategies...)
			for i := range tt.crashes {
				if i > 0 {
					b.probe.WaitFor(t, w.Path(), actors.Started{})
				}
				b.sys.Send(w, actorstest.Crash{Reason: "boom"})
			}
			for i, want := range tt.want {
				if got := b.nextEvent(t); got != want {
					t.Errorf("event %d: got %+v, want %+v", i, got, want)
				}
			}
			// The worker was stopped with its supervisor and built again.
			b.probe.WaitFor(t, w.Path(), actors.Stopped{})
			if s := b.probe.WaitFor(t, w.Path(), actors.Started{}); s.Instance == first {
				t.Errorf("rebuilt worker is the first instance %d", first)
			}
			for path, want := range tt.restarts {
				if n := b.node(t, path); n.Restarts != want || n.State != actors.StateRunning {
					t.Errorf("%s: got %d restarts, state %s; want %d, running", path, n.Restarts, n.State, want)
				}
			}
			b.noEscalation(t)
		})
	}
}

// A failure that leaves a top-level supervisor stops it and its subtree (no
// restart by protoactor's defaults) and arrives on Escalations.
func TestEscalations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		strategies []actors.Strategy
		crashes    int
		want       []actors.SupervisorEvent
	}{
		{
			name:       "budget of the top level exhausted",
			strategies: []actors.Strategy{budget(1)},
			crashes:    2,
			want: []actors.SupervisorEvent{
				{Kind: actors.EventRestarted, Supervisor: "s0", Child: "s0/w", Reason: "boom", Restarts: 1},
				{Kind: actors.EventStopped, Supervisor: "s0", Child: "s0/w", Reason: "boom", Restarts: 1, Escalated: true},
				{Kind: actors.EventStopped, Child: "s0", Reason: "boom", Escalated: true},
			},
		},
		{
			name:       "escalated up to the top level",
			strategies: []actors.Strategy{budget(0), budget(0)},
			crashes:    1,
			want: []actors.SupervisorEvent{
				{Kind: actors.EventStopped, Supervisor: "s0/s1", Child: "s0/s1/w", Reason: "boom", Escalated: true},
				{Kind: actors.EventStopped, Supervisor: "s0", Child: "s0/s1", Reason: "boom", Escalated: true},
				{Kind: actors.EventStopped, Child: "s0", Reason: "boom", Escalated: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			w, _ := b.chain(t, tt.strategies...)
			for i := range tt.crashes {
				if i > 0 {
					b.probe.WaitFor(t, w.Path(), actors.Started{})
				}
				b.sys.Send(w, actorstest.Crash{Reason: "boom"})
			}
			for i, want := range tt.want {
				if got := b.nextEvent(t); got != want {
					t.Errorf("event %d: got %+v, want %+v", i, got, want)
				}
			}
			select {
			case ev := <-b.sys.Escalations():
				ev.At = time.Time{}
				if want := tt.want[len(tt.want)-1]; ev != want {
					t.Errorf("got escalation %+v, want %+v", ev, want)
				}
			case <-time.After(actorstest.Timeout):
				t.Fatal("no escalation")
			}
			actorstest.Eventually(t, "every node stopped", b.allStopped)
			if n := b.node(t, "s0"); n.Restarts != 0 {
				t.Errorf("top level restarted %d times, want 0", n.Restarts)
			}
			b.probe.WaitFor(t, w.Path(), actors.Stopped{})
			if rest := b.probe.Drain(); len(rest) > 0 {
				t.Errorf("after Stopped the worker saw %+v", rest)
			}
		})
	}
}
