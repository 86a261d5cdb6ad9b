package registry

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// guarded is how one call into a tool's code ended.
type guarded[T any] struct {
	// val and err are what the tool returned, when it returned.
	val T
	err error
	// panicked is set when the tool panicked (or exited its goroutine without returning);
	// crash holds the panic value and the stack for the log.
	panicked bool
	crash    error
	// abandoned is set when the deadline passed or ctx was cancelled before the tool
	// returned. Its goroutine is left running; whatever it does next is unknown.
	abandoned bool
	// ctxErr is why the call was abandoned: context.DeadlineExceeded or the parent's cause.
	ctxErr error
}

// cause is the failure for the log: the panic, the context's error or the tool's error.
func (g guarded[T]) cause() error {
	switch {
	case g.panicked:
		return g.crash
	case g.abandoned:
		return g.ctxErr
	}
	return g.err
}

// finishGrace is how long guard waits, once the context has ended, for an answer that was
// already on its way.
const finishGrace = 100 * time.Millisecond

// guard runs fn in its own goroutine with a context that ends after timeout, and returns when
// fn returns or the context ends, whichever is first. A panic in fn is recovered and reported.
//
// When the context ends first, guard waits finishGrace for an answer that was on its way (a
// tool that returned just as its context ended, its deferred work still running), then
// abandons the goroutine: Go cannot stop it, so a tool that ignores its ctx keeps running
// until it returns by itself, and whatever it does meanwhile is unknown. Its eventual answer
// is dropped.
func guard[T any](ctx context.Context, timeout time.Duration, fn func(context.Context) (T, error)) guarded[T] {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan guarded[T], 1) // buffered: an abandoned goroutine never blocks on it
	go func() {
		var g guarded[T]
		returned := false
		defer func() {
			if !returned {
				g.panicked = true
				if p := recover(); p != nil {
					g.crash = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
				} else {
					g.crash = errors.New("the tool's goroutine exited without returning (runtime.Goexit)")
				}
			}
			done <- g
		}()
		g.val, g.err = fn(ctx)
		returned = true
	}()
	select {
	case g := <-done:
		return g
	case <-ctx.Done():
		select {
		case g := <-done: // it finished at the same moment: take its answer
			return g
		case <-time.After(finishGrace):
		}
		cause := context.Cause(ctx)
		if cause == nil {
			cause = ctx.Err()
		}
		return guarded[T]{abandoned: true, ctxErr: cause}
	}
}
