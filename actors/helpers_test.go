package actors_test

import (
	"context"
	"testing"
	"time"

	"buddi/actors"
	"buddi/actors/actorstest"
)

// generous is a strategy whose budget no test exhausts.
var generous = actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 5, Within: time.Minute}}

type testBundle struct {
	sys    *actors.System
	events *actorstest.Events
	probe  *actorstest.Probe
}

// setup returns a System that records its events and is shut down (cleanly,
// or the test fails) when the test ends.
func setup(t *testing.T) *testBundle {
	t.Helper()
	events := actorstest.NewEvents()
	sys := actors.NewSystem(nil, events.Sink)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), actorstest.Timeout)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return &testBundle{sys: sys, events: events, probe: actorstest.NewProbe()}
}

func (b *testBundle) supervisor(t *testing.T, parent *actors.Ref, name string, st actors.Strategy) *actors.Ref {
	t.Helper()
	ref, err := b.sys.NewSupervisor(parent, name, st)
	if err != nil {
		t.Fatalf("NewSupervisor(%v, %q): %v", parent, name, err)
	}
	return ref
}

// spawn starts a probe worker and waits for its Started.
func (b *testBundle) spawn(t *testing.T, parent *actors.Ref, name string) *actors.Ref {
	t.Helper()
	ref, _ := b.spawnInstance(t, parent, name)
	return ref
}

// spawnInstance starts a probe worker, waits for its Started and returns the
// instance that got it.
func (b *testBundle) spawnInstance(t *testing.T, parent *actors.Ref, name string) (*actors.Ref, int64) {
	t.Helper()
	ref, err := b.sys.Spawn(parent, name, b.probe.Produce)
	if err != nil {
		t.Fatalf("Spawn(%v, %q): %v", parent, name, err)
	}
	return ref, b.probe.WaitFor(t, ref.Path(), actors.Started{}).Instance
}

// node returns the node at path in a fresh snapshot.
func (b *testBundle) node(t *testing.T, path string) actors.Node {
	t.Helper()
	n, ok := actorstest.Find(b.sys.Tree(), path)
	if !ok {
		t.Fatalf("Tree has no %s", path)
	}
	return n
}

// nextEvent returns the next event without its time, which it checks is set.
func (b *testBundle) nextEvent(t *testing.T) actors.SupervisorEvent {
	t.Helper()
	ev := b.events.Next(t)
	if ev.At.IsZero() {
		t.Errorf("event %+v: At is zero", ev)
	}
	ev.At = time.Time{}
	return ev
}

func (b *testBundle) allStopped() bool {
	for _, n := range b.sys.Tree() {
		if n.State != actors.StateStopped {
			return false
		}
	}
	return true
}

func (b *testBundle) noEscalation(t *testing.T) {
	t.Helper()
	select {
	case ev := <-b.sys.Escalations():
		t.Errorf("unexpected escalation %+v", ev)
	default:
	}
}
