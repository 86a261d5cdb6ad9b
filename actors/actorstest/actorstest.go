// Package actorstest helps test package actors and code built on it: a probe
// worker that reports every message it receives and can be told to panic or
// block, a recorder for supervisor events, and a poll with a deadline. It is
// for tests only; production code must not import it.
package actorstest

import (
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"buddi/actors"
)

// Timeout bounds every wait in this package.
const Timeout = 10 * time.Second

// Seen is one message a probe actor received.
type Seen struct {
	// Path is the receiving actor's path.
	Path string
	// Instance numbers the actor instances built by one Probe, from 1: a
	// restart shows up as a new number.
	Instance int64
	// Msg is the message.
	Msg any
}

// Crash makes a probe actor panic with Reason.
type Crash struct {
	Reason string // what the actor panics with
}

// Echo makes a probe actor respond with Value.
type Echo struct {
	Value any // what the actor responds with
}

// Block makes a probe actor block inside Receive until Until is closed.
type Block struct {
	Until <-chan struct{} // closed to let the actor return
}

// Probe builds worker actors that report every message, lifecycle ones
// included, on C, before acting on Crash, Echo and Block.
type Probe struct {
	// C receives what the probe's actors see (buffered generously; a full
	// buffer blocks the actor).
	C         chan Seen
	instances atomic.Int64
}

// NewProbe returns a Probe with an empty channel.
func NewProbe() *Probe { return &Probe{C: make(chan Seen, 4096)} }

// Produce builds a new probe actor; pass it to System.Spawn.
func (p *Probe) Produce() actors.Actor {
	return &probeActor{c: p.C, instance: p.instances.Add(1)}
}

type probeActor struct {
	c        chan<- Seen
	instance int64
}

// Receive reports msg, then acts on Crash, Echo and Block.
func (a *probeActor) Receive(c *actors.Context) {
	msg := c.Message()
	a.c <- Seen{Path: c.Path(), Instance: a.instance, Msg: msg}
	switch m := msg.(type) {
	case Crash:
		panic(m.Reason)
	case Echo:
		c.Respond(m.Value)
	case Block:
		<-m.Until
	}
}

// Next returns the next message seen, failing t after Timeout.
func (p *Probe) Next(t testing.TB) Seen {
	t.Helper()
	select {
	case s := <-p.C:
		return s
	case <-time.After(Timeout):
		t.Fatalf("probe: nothing seen within %s", Timeout)
		return Seen{}
	}
}

// WaitFor reads until the actor at path has seen msg (compared with
// reflect.DeepEqual) and returns it; it fails t after Timeout. What it skips
// is lost.
func (p *Probe) WaitFor(t testing.TB, path string, msg any) Seen {
	t.Helper()
	deadline := time.After(Timeout)
	for {
		select {
		case s := <-p.C:
			if s.Path == path && reflect.DeepEqual(s.Msg, msg) {
				return s
			}
		case <-deadline:
			t.Fatalf("probe: %s did not see %#v within %s", path, msg, Timeout)
			return Seen{}
		}
	}
}

// Drain returns what the channel holds now, without waiting.
func (p *Probe) Drain() []Seen {
	var out []Seen
	for {
		select {
		case s := <-p.C:
			out = append(out, s)
		default:
			return out
		}
	}
}

// Events records supervisor events.
type Events struct {
	// C receives every event (buffered generously; a full buffer blocks the
	// supervisor).
	C chan actors.SupervisorEvent
}

// NewEvents returns an empty recorder.
func NewEvents() *Events { return &Events{C: make(chan actors.SupervisorEvent, 1024)} }

// Sink is the EventSink to give to actors.NewSystem.
func (e *Events) Sink(ev actors.SupervisorEvent) { e.C <- ev }

// Next returns the next event, failing t after Timeout.
func (e *Events) Next(t testing.TB) actors.SupervisorEvent {
	t.Helper()
	select {
	case ev := <-e.C:
		return ev
	case <-time.After(Timeout):
		t.Fatalf("events: none within %s", Timeout)
		return actors.SupervisorEvent{}
	}
}

// Eventually polls cond until it holds, failing t with what after Timeout.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not so within %s", what, Timeout)
		}
		<-tick.C
	}
}

// Find returns the node at path in a Tree snapshot.
func Find(nodes []actors.Node, path string) (actors.Node, bool) {
	for _, n := range nodes {
		if n.Path == path {
			return n, true
		}
	}
	return actors.Node{}, false
}
