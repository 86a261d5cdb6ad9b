package sentinels

import "github.com/riverqueue/river"

// Register adds the sentinels' worker: the wakes that are due.
func (e *Engine) Register(w *river.Workers) error {
	return river.AddWorkerSafely(w, &WakesWorker{Engine: e})
}

// Periodic returns the timer that flushes gathered wakes.
func (e *Engine) Periodic() []*river.PeriodicJob {
	return []*river.PeriodicJob{FlushWakesPeriodically()}
}
