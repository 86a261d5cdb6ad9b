package supervisor

import (
	"context"
	"sync/atomic"
	"time"

	"buddi/actors"
	"buddi/queue"
)

// QueueState says whether the queue actor has River running.
type QueueState struct{ running atomic.Bool }

// Running reports whether River is fetching and working jobs.
func (s *QueueState) Running() bool { return s.running.Load() }

// queueActor owns the River client's life: started with the actor, stopped (with a deadline,
// then cancelled) when the actor stops or restarts.
type queueActor struct {
	q     *queue.Queue
	state *QueueState
}

// Queue returns the producer of the queue actor.
func Queue(q *queue.Queue, state *QueueState) func() actors.Actor {
	return func() actors.Actor { return &queueActor{q: q, state: state} }
}

// queueStarted asks the queue actor to answer once it has processed Started.
type queueStarted struct{}

// queueStopWait is how long running jobs get to finish at a stop before they are cancelled.
const queueStopWait = 10 * time.Second

func (a *queueActor) Receive(c *actors.Context) {
	switch c.Message().(type) {
	case actors.Started:
		// River's client lives as long as the context Start is given: this one ends only
		// with the actor, after Stop below.
		if err := a.q.Start(context.Background()); err != nil {
			panic(err)
		}
		a.state.running.Store(true)
	case queueStarted:
		c.Respond(a.state.running.Load())
	case actors.Drain, actors.Stopping, actors.Restarting:
		if !a.state.running.Load() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), queueStopWait)
		defer cancel()
		if err := a.q.Stop(ctx, 5*time.Second); err != nil {
			c.Log().Error("queue did not stop cleanly", "err", err)
		}
		a.state.running.Store(false)
	}
}
