package supervisor

import (
	"context"
	"fmt"
	"time"

	"buddi/actors"
	"buddi/queue"
)

// queueStopWait is how long running jobs get to finish at a stop before they are cancelled.
const queueStopWait = 10 * time.Second

// queueStartFor is how long the queue actor keeps trying to start River (the database may be
// restarting) before it fails and its supervisor decides.
const queueStartFor = time.Minute

// Queue returns the producer of the queue actor, which owns the River client's life: started
// with the actor (riding out a database that is restarting), stopped with a deadline, then
// cancelled, when the actor stops or restarts. Its state goes to state.
func Queue(q *queue.Queue, state *QueueState) func() actors.Actor {
	return actors.Go("queue", func(ctx context.Context) error {
		if started, err := startRiding(ctx, q); err != nil || !started {
			return err
		}
		state.set(true)
		defer state.set(false)
		<-ctx.Done()
		stopCtx, cancel := context.WithTimeout(context.Background(), queueStopWait)
		defer cancel()
		if err := q.Stop(stopCtx, 5*time.Second); err != nil {
			return fmt.Errorf("the queue did not stop cleanly: %w", err)
		}
		return nil
	})
}

// startRiding starts River, trying again with a growing pause while the database does not
// answer, for up to queueStartFor.
func startRiding(ctx context.Context, q *queue.Queue) (started bool, err error) {
	deadline := time.Now().Add(queueStartFor)
	pause := 50 * time.Millisecond
	for {
		// River's client lives as long as the context Start is given: this one ends only
		// with the actor, after Stop.
		err := q.Start(context.WithoutCancel(ctx))
		if err == nil {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, fmt.Errorf("start the queue: %w", err)
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-time.After(pause):
		}
		pause = min(2*pause, 2*time.Second)
	}
}
