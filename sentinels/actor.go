package sentinels

import (
	"context"
	"time"

	"buddi/actors"
	"buddi/plugins"
)

// Loop is how often each sentinel's actor looks at its ledger to see whether it is due.
const Loop = 30 * time.Second

// Children are the sentinels' actors, one per sentinel, for root/sentinels. Each looks at the
// ledger every loop and, when due, ticks; a check that panics fails its actor and its
// supervisor restarts it.
func Children(e *Engine, list []plugins.Sentinel, loop time.Duration) []actors.Child {
	if loop <= 0 {
		loop = Loop
	}
	out := make([]actors.Child, 0, len(list))
	for _, s := range list {
		out = append(out, actors.Child{Name: s.ID, Produce: func() actors.Actor { return &actor{e: e, s: s, loop: loop} }})
	}
	return out
}

type tick struct{}

// IgnoreDeadLetterLogging: a tick that arrives after its actor stopped means nothing.
func (tick) IgnoreDeadLetterLogging() {}

type actor struct {
	e     *Engine
	s     plugins.Sentinel
	loop  time.Duration
	timer *time.Timer
}

// Receive looks at the ledger on each tick: when due it ticks the sentinel, and it sets its
// next look for the moment the sentinel is next due, or the loop, whichever is sooner (so a
// machine that slept looks again within a loop of waking).
func (a *actor) Receive(c *actors.Context) {
	switch c.Message().(type) {
	case actors.Started:
		a.after(c, 0)
	case tick:
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		due, next, err := a.e.Due(ctx, a.s)
		if err != nil {
			c.Log().Warn("sentinel ledger", "sentinel", a.s.ID, "err", err)
			a.after(c, a.loop)
			return
		}
		if due {
			started := a.e.now() // the ledger's start is (about) this: the next is due a period on
			if _, err := a.e.Tick(ctx, a.s); err != nil {
				c.Log().Warn("sentinel", "sentinel", a.s.ID, "err", err)
			}
			next = started.Add(a.s.Period)
		}
		wait := time.Until(next)
		if a.e.Now != nil { // an injected clock: look again at the loop
			wait = a.loop
		}
		a.after(c, min(max(wait, 0), a.loop))
	case actors.Stopping, actors.Restarting:
		if a.timer != nil {
			a.timer.Stop()
			a.timer = nil
		}
	}
}

func (a *actor) after(c *actors.Context, d time.Duration) {
	self, send := c.Self(), c.Sender()
	if a.timer != nil {
		a.timer.Stop()
	}
	a.timer = time.AfterFunc(d, func() { send(self, tick{}) })
}
