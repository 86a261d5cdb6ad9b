package queue

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
)

type partArgs struct{}

func (partArgs) Kind() string { return "test.part" }

type partWorker struct{ river.WorkerDefaults[partArgs] }

func (partWorker) Work(context.Context, *river.Job[partArgs]) error { return nil }

type onePart struct{ err error }

func (p onePart) Register(w *river.Workers) error {
	if p.err != nil {
		return p.err
	}
	return river.AddWorkerSafely(w, &partWorker{})
}

func (onePart) Periodic() []*river.PeriodicJob {
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(time.Hour), func() (river.JobArgs, *river.InsertOpts) { return partArgs{}, nil }, nil)}
}

type plainPart struct{}

func (plainPart) Register(*river.Workers) error { return nil }

// Wire registers every part's workers and gathers the periodic jobs of the parts that have
// some; a part that fails to register is named in the error.
func TestWire(t *testing.T) {
	register, periodic := Wire(onePart{}, plainPart{})
	if len(periodic) != 1 {
		t.Fatalf("%d periodic jobs, want 1", len(periodic))
	}
	w := river.NewWorkers()
	if err := register(w); err != nil {
		t.Fatal(err)
	}
	// The worker is there: adding it again is refused.
	if err := river.AddWorkerSafely(w, &partWorker{}); err == nil {
		t.Fatal("the part's worker was not registered")
	}
	register, _ = Wire(plainPart{}, onePart{err: errors.New("boom")})
	if err := register(river.NewWorkers()); err == nil || !strings.Contains(err.Error(), "queue.onePart") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("register = %v, want the failing part named", err)
	}
}
