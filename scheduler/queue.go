package scheduler

import "github.com/riverqueue/river"

// Jobs are the scheduler's part of the queue: missions' occurrences and reminders.
type Jobs struct {
	Store     *Store         // the missions
	Start     Starter        // starts a mission's run
	Reminders ReminderLimits // the reminders' grace
	Wake      Waker          // starts a reminder's run
}

// Register adds the scheduler's workers.
func (j Jobs) Register(w *river.Workers) error {
	if err := river.AddWorkerSafely(w, &MaterialiseWorker{Store: j.Store}); err != nil {
		return err
	}
	if err := river.AddWorkerSafely(w, &OccurrenceWorker{Store: j.Store, Start: j.Start}); err != nil {
		return err
	}
	return river.AddWorkerSafely(w, &RemindersWorker{Pool: j.Store.Pool, Limits: j.Reminders, Wake: j.Wake})
}

// Periodic returns the scheduler's timers: materialising occurrences and firing reminders.
func (Jobs) Periodic() []*river.PeriodicJob {
	return []*river.PeriodicJob{MaterialisePeriodically(), FireRemindersPeriodically()}
}
