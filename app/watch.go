package app

import (
	"context"
	"os"
	"time"

	"buddi/internal/timezone"
	"buddi/scheduler"
	"buddi/sentinels"
	"buddi/surfaces/dashboard"
)

// watchDeps is what the Reminders and Sentinels and alerts pages read and write through: the
// reminders in the pool, the sentinels' engine over the same tables the sentinel actors tick
// against, every sentinel compiled in, and the owner's time zone.
func (w *wired) watchDeps() *dashboard.Watch {
	pool := w.src.Pool
	limits, err := scheduler.ReminderLimitsFromEnv(os.Getenv)
	if err != nil {
		// serve refused to start on this already; the page shows the defaults.
		limits = scheduler.DefaultReminderLimits
	}
	return &dashboard.Watch{
		Reminders: func(ctx context.Context, all bool) ([]scheduler.Reminder, error) {
			return scheduler.Reminders(ctx, pool, "", all)
		},
		CancelReminder: func(ctx context.Context, id int64) error { return scheduler.CancelReminder(ctx, pool, id) },
		Limits:         limits,
		Sentinels:      &sentinels.Engine{Pool: pool},
		List:           allSentinels(Manifests(nil, "", nil)),
		Zone:           func() *time.Location { return timezone.Local().Location() },
	}
}
