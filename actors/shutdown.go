package actors

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

const (
	// drainTimeout bounds the whole drain phase of Shutdown (and it takes at
	// most half of what remains of Shutdown's ctx).
	drainTimeout = 2 * time.Second
	// stopTimeout bounds the stop of each level of the tree (and Shutdown's
	// ctx bounds it too).
	stopTimeout = 5 * time.Second
)

// Shutdown stops the whole tree. It refuses new spawns, sends Drain to every
// actor level by level (parents before children) and waits briefly for each
// to handle it, then stops the actors from the leaves up, each level with its
// own deadline inside ctx. Actors receive Stopping and then Stopped. It
// returns an error wrapping ErrStopTimeout and naming the actors that did not
// stop in time (they may stop later). Escalations is closed when it returns.
// Shutdown may be called again to retry.
func (s *System) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.spawning.Wait() // no new claims after closed: every live node gets its PID

	s.drain(ctx)
	err := s.stopAll(ctx)

	s.final.Do(func() {
		s.as.Shutdown() // only marks protoactor's system stopped
		s.mu.Lock()
		s.escDone = true
		close(s.escalations)
		s.mu.Unlock()
	})
	return err
}

// Stop stops one actor and its subtree, waits until ctx ends for it to have
// stopped, and removes it from the tree: a restarted parent will not rebuild
// it. Never call it from inside the Receive of that actor or of one of its
// descendants: the stop waits for that Receive to return.
func (s *System) Stop(ctx context.Context, ref *Ref) error {
	if ref == nil {
		return nil
	}
	done := s.stopAsync(ref)
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("actors: stop %s: %w", ref.path, ctx.Err())
	}
}

// stopAsync marks the actor at ref and its subtree as not to be rebuilt and
// sends it protoactor's stop. It returns a channel closed once the actor has
// terminated, or nil when it is not running.
func (s *System) stopAsync(ref *Ref) <-chan struct{} {
	s.mu.Lock()
	n := s.nodes[ref.path]
	if n == nil {
		s.mu.Unlock()
		return nil
	}
	if !n.alive {
		s.removeLocked(n)
		s.mu.Unlock()
		return nil
	}
	var mark func(n *node)
	mark = func(n *node) {
		n.forgot = true
		for _, c := range n.children {
			mark(c)
		}
	}
	mark(n)
	done, pid := n.done, n.pid
	s.mu.Unlock()
	if pid == nil {
		pid = ref.pid
	}
	s.as.Root.Stop(pid)
	return done
}

// target is one live actor at Shutdown: done is closed when it has
// terminated. For a Drain, ack is closed when it has taken Drain.
type target struct {
	path string
	pid  *actor.PID
	done <-chan struct{}
	ack  <-chan struct{}
}

// levels returns the live actors by depth, each level in tree order.
func (s *System) levels() [][]target {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]target
	var walk func(n *node)
	walk = func(n *node) {
		if !n.alive || n.pid == nil {
			return
		}
		for len(out) <= n.depth {
			out = append(out, nil)
		}
		out[n.depth] = append(out[n.depth], target{path: n.path, pid: n.pid, done: n.done})
		for _, c := range n.children {
			walk(c)
		}
	}
	for _, n := range s.tops {
		walk(n)
	}
	return out
}

func (s *System) drain(ctx context.Context) {
	budget := drainTimeout
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl)/2)
	}
	dctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	for _, level := range s.levels() {
		for i := range level {
			req := newDrainRequest()
			s.as.Root.Send(level[i].pid, req)
			level[i].ack = req.ch
		}
		// An actor that failed just before is suspended until its supervisor
		// decides, and now that is a stop: it never takes Drain but
		// terminates, which ends the wait too.
		if late := wait(dctx, level); len(late) > 0 {
			s.log.Warn("drain: actors did not take Drain in time; stopping them anyway",
				slog.String("actors", strings.Join(late, ", ")))
		}
	}
}

func (s *System) stopAll(ctx context.Context) error {
	levels := s.levels()
	var late []string
	for d := len(levels) - 1; d >= 0; d-- {
		sctx, cancel := context.WithTimeout(ctx, stopTimeout)
		for _, t := range levels[d] {
			s.as.Root.Stop(t.pid)
		}
		late = append(late, wait(sctx, levels[d])...)
		cancel()
	}
	if len(late) > 0 {
		return fmt.Errorf("actors: shutdown: %s: %w", strings.Join(late, ", "), ErrStopTimeout)
	}
	return nil
}

// wait waits until ctx ends for every target to be done (or to have acked,
// when ack is set) and returns the paths of those that were not.
func wait(ctx context.Context, ts []target) (late []string) {
	for _, t := range ts {
		select {
		case <-t.done:
		case <-t.ack: // nil when not draining: never ready
		case <-ctx.Done():
			select {
			case <-t.done:
			case <-t.ack:
			default:
				late = append(late, t.path)
			}
		}
	}
	return late
}
