package sentinels

import (
	"context"
	"fmt"
	"time"

	"buddi/actors"
	"buddi/plugins"
)

// Loop is how often each sentinel's actor looks at its ledger to see whether it is due.
const Loop = 30 * time.Second

// Start spawns one actor per sentinel under parent (root/sentinels). Each looks at the ledger
// every loop and, when due, ticks on its own goroutine, so a check that panics fails its actor
// and its supervisor restarts it.
func Start(sys *actors.System, parent *actors.Ref, e *Engine, list []plugins.Sentinel, loop time.Duration) error {
	if loop <= 0 {
		loop = Loop
	}
	for _, s := range list {
		s := s
		if _, err := sys.Spawn(parent, s.ID, func() actors.Actor { return &actor{sys: sys, e: e, s: s, loop: loop} }); err != nil {
			return fmt.Errorf("start sentinel %s: %w", s.ID, err)
		}
	}
	return nil
}

type tick struct{}

type actor struct {
	sys  *actors.System
	e    *Engine
	s    plugins.Sentinel
	loop time.Duration
	stop chan struct{}
}

func (a *actor) Receive(c *actors.Context) {
	switch c.Message().(type) {
	case actors.Started:
		a.stop = make(chan struct{})
		self, stop := c.Self(), a.stop
		go func() {
			t := time.NewTicker(a.loop)
			defer t.Stop()
			for {
				a.sys.Send(self, tick{})
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
	case tick:
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		due, err := a.e.Due(ctx, a.s)
		if err != nil {
			c.Log().Warn("sentinel ledger", "sentinel", a.s.ID, "err", err)
			return
		}
		if !due {
			return
		}
		if _, err := a.e.Tick(ctx, a.s); err != nil {
			c.Log().Warn("sentinel", "sentinel", a.s.ID, "err", err)
		}
	case actors.Stopping, actors.Restarting:
		if a.stop != nil {
			close(a.stop)
			a.stop = nil
		}
	}
}
