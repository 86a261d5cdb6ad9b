package actors

import (
	"fmt"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
)

// worker is the protoactor actor around a buddi Actor: it translates
// protoactor's lifecycle messages into ours and keeps the tree's record.
type worker struct {
	sys   *System
	path  string
	gen   uint64
	inner Actor
	bad   error // the producer failed: this instance fails on Started
	c     Context
}

func (s *System) newWorker(path string, gen uint64, produce func() Actor) *worker {
	w := &worker{sys: s, path: path, gen: gen}
	w.c.path, w.c.log = path, s.log.With(slog.String("actor", path))
	func() {
		// produce runs inside protoactor's spawn, on the parent's goroutine:
		// a panic there must become this child's failure, not the parent's.
		defer func() {
			if r := recover(); r != nil {
				w.bad = fmt.Errorf("produce %s: %v", path, r)
			}
		}()
		w.inner = produce()
	}()
	if w.inner == nil && w.bad == nil {
		w.bad = fmt.Errorf("produce %s: returned nil", path)
	}
	return w
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
	case *actor.Stopping:
		w.deliverQuietly(actx, Stopping{})
	case *actor.Stopped:
		w.sys.markStopped(w.path, w.gen)
		w.deliverQuietly(actx, Stopped{})
	case *drainRequest:
		defer m.ack()
		w.deliverQuietly(actx, Drain{})
	case *request:
		w.deliver(actx, m.msg, m)
	case *spawnRequest:
		m.answer(nil, fmt.Errorf("actors: spawn under %s: a worker has no children", w.path))
	case actor.SystemMessage, actor.AutoReceiveMessage, actor.AutoRespond, *actor.ReceiveTimeout:
		// protoactor's own; not for the Actor.
	default:
		w.deliver(actx, m, nil)
	}
}

// deliver hands msg to the Actor. A panic propagates to protoactor (the
// parent supervisor handles it) after failing the request being handled.
func (w *worker) deliver(actx actor.Context, msg any, req *request) {
	if w.inner == nil {
		return
	}
	w.c.actx, w.c.msg, w.c.req = actx, msg, req
	defer func() {
		w.c.actx, w.c.msg, w.c.req = nil, nil, nil
		if req == nil {
			return
		}
		if r := recover(); r != nil {
			req.answer(nil, fmt.Errorf("actors: %s failed handling the request: %v", w.path, r))
			panic(r)
		}
	}()
	w.inner.Receive(&w.c)
}

// deliverQuietly hands a lifecycle message to the Actor and logs a panic
// instead of failing: a panic while stopping would leave protoactor's stop
// half done, and the parent waiting for it forever.
func (w *worker) deliverQuietly(actx actor.Context, msg any) {
	defer func() {
		if r := recover(); r != nil {
			w.c.log.Error("actor panicked handling a lifecycle message; ignored",
				slog.String("message", typeName(msg)), slog.Any("panic", r))
		}
	}()
	w.deliver(actx, msg, nil)
}
