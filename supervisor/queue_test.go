package supervisor_test

import (
	"context"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"buddi/actors"
	"buddi/db"
	"buddi/internal/pgtest"
	"buddi/queue"
	"buddi/supervisor"
)

// The database restarts while buddi starts: the queue actor keeps trying to start River,
// with a growing pause, instead of spending the root's budget in milliseconds, and runs once
// the database answers again; nothing escalates.
func TestQueueRidesOutADatabaseRestartAtStart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, dsn := pgtest.OwnCluster(t)
	pool, err := db.Open(ctx, dsn, db.Options{Name: "queue"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close) // after the tree's shutdown (registered later, run first): River resigns through it
	q, err := queue.New(pool, queue.Options{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}

	// The postmaster dies just before the queue starts.
	if err := syscall.Kill(c.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	sys, tree, events := newTree(t)
	state := &supervisor.QueueState{}
	if err := tree.Start(supervisor.Services{Queue: supervisor.Queue(q, state), QueueState: state}); err != nil {
		t.Fatal(err)
	}
	// It comes back a moment later, as a supervised cluster does.
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tree.AwaitQueue(ctx); err != nil {
		t.Fatalf("the queue never ran: %v", err)
	}
	if !state.Running() {
		t.Fatal("the queue says it does not run")
	}
	select {
	case ev := <-sys.Escalations():
		t.Fatalf("escalated: %+v", ev)
	case ev := <-events.C:
		if ev.Kind == actors.EventStopped {
			t.Fatalf("an actor was stopped: %+v", ev)
		}
	default:
	}
}
