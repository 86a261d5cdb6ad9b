package actors

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// behaviour is one incarnation of a buddi Actor inside a protoactor actor: a
// worker's, or a supervising actor's (System.SpawnSupervisor). It hands the
// Actor its messages and keeps the requests it promised to answer later
// (Context.Defer), which fail when the incarnation ends.
type behaviour struct {
	sys   *System
	path  string
	inner Actor
	bad   error // the producer failed: this instance fails on Started
	c     Context

	mu       sync.Mutex
	deferred map[*request]struct{}
	ended    string // why the incarnation ended: later Defers fail at once
}

func (s *System) newBehaviour(path string, produce func() Actor) *behaviour {
	b := &behaviour{sys: s, path: path}
	b.c.sys, b.c.beh = s, b
	b.c.path, b.c.log = path, s.log.With(slog.String("actor", path))
	func() {
		// produce runs inside protoactor's spawn, on the parent's goroutine:
		// a panic there must become this child's failure, not the parent's.
		defer func() {
			if r := recover(); r != nil {
				b.bad = fmt.Errorf("produce %s: %v", path, r)
			}
		}()
		b.inner = produce()
	}()
	if b.inner == nil && b.bad == nil {
		b.bad = fmt.Errorf("produce %s: returned nil", path)
	}
	return b
}

// deliver hands msg to the Actor. A panic propagates to protoactor (the
// parent supervisor handles it) after failing the request being handled.
func (b *behaviour) deliver(actx actor.Context, msg any, req *request) {
	if b.inner == nil {
		return
	}
	b.c.actx, b.c.msg, b.c.req = actx, msg, req
	defer func() {
		b.c.actx, b.c.msg, b.c.req = nil, nil, nil
		if req == nil {
			return
		}
		if r := recover(); r != nil {
			b.forget(req)
			req.answer(nil, fmt.Errorf("actors: %s failed handling the request: %v", b.path, r))
			panic(r)
		}
	}()
	b.inner.Receive(&b.c)
}

// deliverQuietly hands a lifecycle message to the Actor and logs a panic
// instead of failing: a panic while stopping would leave protoactor's stop
// half done, and the parent waiting for it forever.
func (b *behaviour) deliverQuietly(actx actor.Context, msg any) {
	defer func() {
		if r := recover(); r != nil {
			b.c.log.Error("actor panicked handling a lifecycle message; ignored",
				slog.String("message", typeName(msg)), slog.Any("panic", r))
		}
	}()
	b.deliver(actx, msg, nil)
}

// promise records that req will be answered later.
func (b *behaviour) promise(req *request) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended != "" {
		return false
	}
	if b.deferred == nil {
		b.deferred = map[*request]struct{}{}
	}
	b.deferred[req] = struct{}{}
	return true
}

func (b *behaviour) forget(req *request) {
	b.mu.Lock()
	delete(b.deferred, req)
	b.mu.Unlock()
}

// end fails every request this incarnation promised and did not answer: how
// is "restarted" or "stopped".
func (b *behaviour) end(how string) {
	b.mu.Lock()
	pending := b.deferred
	b.deferred, b.ended = nil, how
	b.mu.Unlock()
	for req := range pending {
		req.answer(nil, fmt.Errorf("actors: %s %s before answering: %w", b.path, how, ErrNotRunning))
	}
}

// worker is the protoactor actor around a buddi Actor: it translates
// protoactor's lifecycle messages into ours and keeps the tree's record.
type worker struct {
	*behaviour
	gen uint64
}

func (s *System) newWorker(path string, gen uint64, produce func() Actor) *worker {
	return &worker{behaviour: s.newBehaviour(path, produce), gen: gen}
}

// Receive implements actor.Actor.
func (w *worker) Receive(actx actor.Context) {
	switch m := actx.Message().(type) {
	case *actor.Started:
		if w.bad != nil {
			panic(w.bad)
		}
		w.sys.markStarted(w.path, w.gen)
		w.deliver(actx, Started{}, nil)
	case *actor.Restarting:
		reason := w.sys.markRestarting(w.path, w.gen)
		w.deliverQuietly(actx, Restarting{Reason: reason})
		w.end("restarted")
	case *actor.Stopping:
		w.deliverQuietly(actx, Stopping{})
	case *actor.Stopped:
		w.sys.markStopped(w.path, w.gen)
		w.deliverQuietly(actx, Stopped{})
		w.end("stopped")
	case *drainRequest:
		defer m.ack()
		w.deliverQuietly(actx, Drain{})
	case *request:
		w.deliver(actx, m.msg, m)
	case *spawnRequest:
		m.answer(nil, fmt.Errorf("actors: spawn under %s: a worker has no children", w.path))
	case *restartLater, *childFailed:
		// a supervisor's own; never addressed to a worker.
	case actor.SystemMessage, actor.AutoReceiveMessage, actor.AutoRespond, *actor.ReceiveTimeout:
		// protoactor's own; not for the Actor.
	default:
		w.deliver(actx, m, nil)
	}
}
