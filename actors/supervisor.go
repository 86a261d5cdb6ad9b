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
	restarting bool       // this instance got Restarting: hold spawn requests
	beh        *behaviour // a supervising actor's behaviour; nil for a plain supervisor
}

func (s *System) newSupervisor(path string, gen uint64, strategy Strategy, inner func() Actor) *supervisor {
	a := &supervisor{
		supervision: &supervision{sys: s, path: path, strategy: strategy, failures: map[string][]time.Time{}},
		gen:         gen,
	}
	if inner != nil {
		a.beh = s.newBehaviour(path, inner)
	}
	return a
}

// Receive implements actor.Actor.
func (a *supervisor) Receive(actx actor.Context) {
	switch m := actx.Message().(type) {
	case *actor.Started:
		a.restarting = false
		a.self = actx.Self()
		if a.beh != nil && a.beh.bad != nil {
			panic(a.beh.bad)
		}
		a.sys.markStarted(a.path, a.gen)
		a.rebuild(actx)
		a.toBehaviour(actx, Started{}, nil)
	case *actor.Restarting:
		// protoactor now stops all our children and, once they have all
		// terminated, builds a new supervisor instance, which rebuilds them.
		a.restarting = true
		reason := a.sys.markRestarting(a.path, a.gen)
		if a.beh != nil {
			a.beh.deliverQuietly(actx, Restarting{Reason: reason})
			a.beh.end("restarted")
		}
	case *actor.Stopping:
		if a.beh != nil {
			a.beh.deliverQuietly(actx, Stopping{})
		}
	case *actor.Stopped:
		a.sys.markStopped(a.path, a.gen)
		if a.beh != nil {
			a.beh.deliverQuietly(actx, Stopped{})
			a.beh.end("stopped")
		}
	case *actor.Terminated:
		a.forget(m.Who.Id)
		a.sys.childTerminated(m.Who)
	case *spawnRequest:
		if a.restarting {
			a.sys.hold(a.path, a.gen, m)
			return
		}
		a.spawn(actx, m)
	case *restartLater:
		a.restartNow(actx, m)
	case *childFailed:
		a.toBehaviour(actx, ChildFailed{Path: m.path, Reason: m.reason, Restarts: m.restarts}, nil)
	case *drainRequest:
		defer m.ack()
		if a.beh != nil {
			a.beh.deliverQuietly(actx, Drain{})
		}
	case *request:
		if a.beh == nil {
			m.answer(nil, fmt.Errorf("actors: request to %s: a supervisor answers no requests", a.path))
			return
		}
		a.toBehaviour(actx, m.msg, m)
	case actor.SystemMessage, actor.AutoReceiveMessage, actor.AutoRespond, *actor.ReceiveTimeout:
		// protoactor's own.
	default:
		a.toBehaviour(actx, m, nil)
	}
}

// toBehaviour hands msg to a supervising actor's behaviour, with the power to
// spawn children in this context.
func (a *supervisor) toBehaviour(actx actor.Context, msg any, req *request) {
	if a.beh == nil {
		return
	}
	a.beh.c.spawn = func(sp spec) (*Ref, error) { return a.spawnChild(actx, sp) }
	defer func() { a.beh.c.spawn = nil }()
	a.beh.deliver(actx, msg, req)
}

// spawn builds a new child in this supervisor's context and answers req.
func (a *supervisor) spawn(actx actor.Context, req *spawnRequest) {
	req.answer(a.spawnChild(actx, req.spec))
}

// spawnChild builds a new child in this supervisor's context.
func (a *supervisor) spawnChild(actx actor.Context, sp spec) (*Ref, error) {
	s := a.sys
	s.mu.Lock()
	self := s.currentLocked(a.path, a.gen)
	if self == nil || !self.alive {
		s.mu.Unlock()
		return nil, fmt.Errorf("actors: spawn under %s: %w", a.path, ErrNotRunning)
	}
	if err := checkName(sp.name); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	n, gen, err := s.claimLocked(self, sp)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	pid, err := actx.SpawnNamed(s.props(n, gen), n.name)
	if err := s.commit(n, gen, pid, err, true); err != nil {
		return nil, err
	}
	return &Ref{pid: pid, path: n.path}, nil
}

// restartNow carries out a restart that waited out its backoff: now a stop,
// when the system has begun to shut down.
func (a *supervisor) restartNow(actx actor.Context, m *restartLater) {
	sup, ok := actx.(actor.Supervisor)
	if !ok {
		return
	}
	if a.sys.isClosed() {
		sup.StopChildren(m.pids...)
		return
	}
	sup.RestartChildren(m.pids...)
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
			var gone []*node // the previous incarnation's own children: gone with it
			for _, c := range self.children {
				if c.transient && !c.alive {
					gone = append(gone, c)
				}
			}
			for _, c := range gone {
				s.removeLocked(c)
			}
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
