package queue

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

// Part is what one package puts on the queue: it registers its own workers. A Part that also
// has periodic jobs implements Periodic.
type Part interface {
	// Register adds the package's workers.
	Register(w *river.Workers) error
}

// Periodic is a Part with jobs inserted on a timer.
type Periodic interface {
	// Periodic returns the package's periodic jobs.
	Periodic() []*river.PeriodicJob
}

// Wire gathers the parts into Options' Register and Periodic: the composition root names the
// parts, each part names its own workers.
func Wire(parts ...Part) (register func(*river.Workers) error, periodic []*river.PeriodicJob) {
	for _, p := range parts {
		if pp, ok := p.(Periodic); ok {
			periodic = append(periodic, pp.Periodic()...)
		}
	}
	register = func(w *river.Workers) error {
		for _, p := range parts {
			if err := p.Register(w); err != nil {
				return fmt.Errorf("register the workers of %T: %w", p, err)
			}
		}
		return nil
	}
	return register, periodic
}

// DeadLetters is the dead-letter watch as a Part: its worker and its periodic job.
type DeadLetters struct {
	Pool   *pgxpool.Pool        // the application's database
	Report func(message string) // hears a reported incident's message; nil: the event only
}

// Register adds the dead-letter watch's worker.
func (d DeadLetters) Register(w *river.Workers) error {
	return river.AddWorkerSafely(w, &DeadLetterWorker{Pool: d.Pool, Report: d.Report})
}

// Periodic returns the watch's timer.
func (DeadLetters) Periodic() []*river.PeriodicJob {
	return []*river.PeriodicJob{WatchDeadLettersPeriodically()}
}
