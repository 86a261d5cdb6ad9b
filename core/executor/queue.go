package executor

import "github.com/riverqueue/river"

// Register adds the executor's workers: an approved action's execution, and the expiry of
// late approvals.
func (e *Executor) Register(w *river.Workers) error {
	if err := river.AddWorkerSafely(w, &Worker{Executor: e}); err != nil {
		return err
	}
	return river.AddWorkerSafely(w, &ExpireWorker{Pool: e.pool, Resume: e.queue})
}

// Periodic returns the executor's timer: the sweep that expires late approvals.
func (e *Executor) Periodic() []*river.PeriodicJob {
	return []*river.PeriodicJob{ExpirePeriodically()}
}
