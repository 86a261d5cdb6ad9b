package metrics

import (
	"context"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// Jobs is the queue's plugin that times every job a worker takes: how long it waited past
// when it was due (buddi_queue_wait_seconds) and how long its work took
// (buddi_job_duration_seconds). Install it in the River client's Plugins.
type Jobs struct{}

var (
	_ rivertype.WorkerMiddleware = Jobs{}
	_ rivertype.Plugin           = Jobs{}
)

// IsMiddleware implements rivertype.Middleware.
func (Jobs) IsMiddleware() bool { return true }

// IsPlugin implements rivertype.Plugin.
func (Jobs) IsPlugin() bool { return true }

// Work implements rivertype.WorkerMiddleware.
func (Jobs) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	began := time.Now()
	if job.AttemptedAt != nil {
		queueWait.WithLabelValues(job.Kind).Observe(max(job.AttemptedAt.Sub(job.ScheduledAt), 0).Seconds())
	}
	err := doInner(ctx)
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	jobSeconds.WithLabelValues(job.Kind, outcome).Observe(time.Since(began).Seconds())
	return err
}
