package actors

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// supervisor is the protoactor actor behind a supervisor node. It holds no
// behaviour of its own: it spawns children when asked, rebuilds them when it
// is itself restarted, and is its children's SupervisorStrategy (protoactor
// uses an actor that implements actor.SupervisorStrategy in place of the
// props' strategy), through its embedded supervision.
type supervisor struct {
	*supervision
	gen        uint64
	restarting bool // this instance got Restarting: hold spawn requests
}

func (s *System) newSupervisor(path string, gen uint64, strategy Strategy) *supervisor {
	return &supervisor{
		supervision: &supervision{sys: s, path: path, strategy: strategy, failures: map[string][]time.Time{}},
		gen:         gen,
	}
}

// Receive implements actor.Actor.
func (a *supervisor) Receive(actx actor.Context) {
	switch m := actx.Message().(type) {
	case *actor.Started:
		a.restarting = false
		a.sys.markStarted(a.path, a.gen)
		a.rebuild(actx)
	case *actor.Restarting:
		// protoactor now stops all our children and, once they have all
		// terminated, builds a new supervisor instance, which rebuilds them.
		a.restarting = true
		a.sys.markRestarting(a.path, a.gen)
	case *actor.Stopped:
		a.sys.markStopped(a.path, a.gen)
	case *actor.Terminated:
		a.forget(m.Who.Id)
		a.sys.childTerminated(m.Who)
	case *spawnRequest:
		if a.restarting {
			a.sys.hold(a.path, a.gen, m)
			return
		}
		a.spawn(actx, m)
	case *drainRequest:
		m.ack()
	case *request:
		m.answer(nil, fmt.Errorf("actors: request to %s: a supervisor answers no requests", a.path))
	}
}

// spawn builds a new child in this supervisor's context.
func (a *supervisor) spawn(actx actor.Context, req *spawnRequest) {
	s := a.sys
	s.mu.Lock()
	self := s.currentLocked(a.path, a.gen)
	if self == nil || !self.alive {
		s.mu.Unlock()
		req.answer(nil, fmt.Errorf("actors: spawn under %s: %w", a.path, ErrNotRunning))
		return
	}
	n, gen, err := s.claimLocked(self, req.spec)
	s.mu.Unlock()
	if err != nil {
		req.answer(nil, err)
		return
	}
	pid, err := actx.SpawnNamed(s.props(n, gen), n.name)
	if err := s.commit(n, gen, pid, err, true); err != nil {
		req.answer(nil, err)
		return
	}
	req.answer(&Ref{pid: pid, path: n.path}, nil)
}

// rebuild spawns again every child whose incarnation has terminated (after a
// restart of this supervisor: all of them), then the spawns held meanwhile.
func (a *supervisor) rebuild(actx actor.Context) {
	s := a.sys
	type item struct {
		n   *node
		gen uint64
	}
	var items []item
	var held []*spawnRequest
	s.mu.Lock()
	if self := s.currentLocked(a.path, a.gen); self != nil {
		if !s.closed {
			for _, c := range self.children {
				if !c.alive {
					s.reviveLocked(c)
					items = append(items, item{c, c.gen})
				}
			}
		}
		held, self.pending = self.pending, nil
	}
	s.mu.Unlock()
	for _, it := range items {
		pid, err := actx.SpawnNamed(s.props(it.n, it.gen), it.n.name)
		if err := s.commit(it.n, it.gen, pid, err, false); err != nil {
			s.log.Error("rebuild child", slog.String("supervisor", a.path), slog.Any("error", err))
		}
	}
	for _, req := range held {
		a.spawn(actx, req)
	}
}

// hold keeps a spawn request that arrived while the supervisor restarts: a
// child spawned now would be stopped with the others, or hold up the restart.
func (s *System) hold(path string, gen uint64, req *spawnRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.currentLocked(path, gen); n != nil && n.alive {
		n.pending = append(n.pending, req)
		return
	}
	req.answer(nil, fmt.Errorf("actors: spawn under %s: %w", path, ErrNotRunning))
}
