package actors

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Request sends msg to the actor and waits for its Context.Respond, until ctx
// ends. It fails at once with ErrNotRunning when the actor has stopped, and
// with the panic's text when the actor fails while handling msg. It uses a
// plain channel rather than a protoactor future (those race, #1145). Never
// call it from inside Receive.
func (s *System) Request(ctx context.Context, to *Ref, msg any) (any, error) {
	if to == nil || msg == nil {
		return nil, errors.New("actors: request: nil ref or message")
	}
	s.mu.Lock()
	n := s.nodes[to.path]
	if n == nil || !n.alive {
		s.mu.Unlock()
		return nil, fmt.Errorf("actors: request to %s: %w", to.path, ErrNotRunning)
	}
	done := n.done
	s.mu.Unlock()

	req := &request{msg: msg, ch: make(chan reply, 1)}
	s.as.Root.Send(to.pid, req)
	select {
	case r := <-req.ch:
		return r.v, r.err
	case <-done:
		select {
		case r := <-req.ch:
			return r.v, r.err
		default:
			return nil, fmt.Errorf("actors: request to %s: %w", to.path, ErrNotRunning)
		}
	case <-ctx.Done():
		return nil, fmt.Errorf("actors: request to %s: %w", to.path, ctx.Err())
	}
}

// request carries a System.Request to the actor and its answer back.
type request struct {
	msg any
	ch  chan reply // capacity 1: the first answer wins
}

type reply struct {
	v   any
	err error
}

func (r *request) answer(v any, err error) {
	select {
	case r.ch <- reply{v, err}:
	default:
	}
}

// IgnoreDeadLetterLogging implements actor.IgnoreDeadLetterLogging: the
// sender gets an error instead.
func (*request) IgnoreDeadLetterLogging() {}

// spawnRequest asks a supervisor to spawn a child in its own context, so that
// supervision applies to it.
type spawnRequest struct {
	spec spec
	ch   chan spawnReply // capacity 1
}

type spawnReply struct {
	ref *Ref
	err error
}

func (r *spawnRequest) answer(ref *Ref, err error) {
	select {
	case r.ch <- spawnReply{ref, err}:
	default:
	}
}

// IgnoreDeadLetterLogging implements actor.IgnoreDeadLetterLogging.
func (*spawnRequest) IgnoreDeadLetterLogging() {}

// drainRequest carries Drain; ch is closed once the actor has handled it.
type drainRequest struct {
	ch   chan struct{}
	once sync.Once
}

func newDrainRequest() *drainRequest { return &drainRequest{ch: make(chan struct{})} }

func (r *drainRequest) ack() { r.once.Do(func() { close(r.ch) }) }

// IgnoreDeadLetterLogging implements actor.IgnoreDeadLetterLogging.
func (*drainRequest) IgnoreDeadLetterLogging() {}

func typeName(v any) string { return fmt.Sprintf("%T", v) }
