package gateway

import (
	"context"

	"buddi/actors"
)

// workActor runs long work (a poll loop, a set of listeners) on its own goroutine under an
// actor: Stopping cancels the work and waits for it; an end of the work that quiet does not
// expect fails the actor, and its supervisor restarts it.
type workActor struct {
	sys   *actors.System
	name  string                          // says whose work ended, in the failure
	work  func(ctx context.Context) error // returns when ctx ends, or with why it could not go on
	quiet func(error) bool                // an end that leaves the actor idle instead (nil: none)

	cancel context.CancelFunc
	done   chan struct{}
}

type workEnded struct{ err error }

func (a *workActor) Receive(c *actors.Context) {
	switch m := c.Message().(type) {
	case actors.Started:
		ctx, cancel := context.WithCancel(context.Background())
		a.cancel, a.done = cancel, make(chan struct{})
		self, done := c.Self(), a.done
		go func() {
			defer close(done)
			err := a.work(ctx)
			if ctx.Err() == nil {
				a.sys.Send(self, workEnded{err: err})
			}
		}()
	case workEnded:
		if a.quiet != nil && a.quiet(m.err) {
			return
		}
		panic(a.name + " ended: " + errString(m.err))
	case actors.Stopping, actors.Restarting, actors.Drain:
		if a.cancel != nil {
			a.cancel()
			<-a.done
			a.cancel = nil
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "without an error"
	}
	return err.Error()
}
