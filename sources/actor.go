package sources

import (
	"context"
	"time"

	"buddi/actors"
	"buddi/plugins"
)

// Loop is the longest a source's actor waits before it looks at its ledger again, so a
// machine that slept polls what is due within a loop of waking.
const Loop = 30 * time.Second

// Children are the sources' actors, one per source, for root/sources. Each looks at its
// source's ledger, polls it when due, and waits until it is next due (at most loop). A poll
// that panics fails its actor and its supervisor starts it again; a stop cancels a poll in
// flight.
func Children(e *Engine, list []plugins.Source, loop time.Duration) []actors.Child {
	if loop <= 0 {
		loop = Loop
	}
	out := make([]actors.Child, 0, len(list))
	for _, s := range list {
		out = append(out, actors.Child{Name: s.ID, Produce: actors.Go("source "+s.ID, func(ctx context.Context) error {
			return e.serve(ctx, s, loop)
		})})
	}
	return out
}

// serve is one source's actor's work, until ctx ends.
func (e *Engine) serve(ctx context.Context, s plugins.Source, loop time.Duration) error {
	log := e.log().With("source", s.ID)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		due, next, err := e.Due(ctx, s)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			log.Warn("a source's ledger could not be read", "err", err)
			timer.Reset(loop)
			continue
		case due:
			if _, err := e.Tick(ctx, s); err != nil && ctx.Err() == nil {
				log.Debug("a source's poll failed; it backs off", "err", err) // failed logged the cause
			}
			if _, next, err = e.Due(ctx, s); err != nil {
				next = e.now().Add(loop)
			}
		}
		wait := next.Sub(e.now())
		if e.Now != nil { // an injected clock: look again at the loop
			wait = loop
		}
		timer.Reset(min(max(wait, 0), loop))
	}
}
