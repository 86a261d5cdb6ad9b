package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"buddi/core/eventlog"
	"buddi/core/events"
)

// ProbeArgs is a job that proves the queue works end to end: its worker records a
// queue.probed event in the same transaction that completes the job.
type ProbeArgs struct {
	Note string `json:"note,omitempty"` // free text, copied into the queue.probed event
}

// Kind is River's name for the job.
func (ProbeArgs) Kind() string { return "queue.probe" }

type probeWorker struct {
	river.WorkerDefaults[ProbeArgs]
	pool *pgxpool.Pool
}

func (w *probeWorker) Timeout(*river.Job[ProbeArgs]) time.Duration { return 30 * time.Second }

// Work appends the event and completes the job in one transaction, so a crash between the
// two can neither lose the fact nor record it twice.
func (w *probeWorker) Work(ctx context.Context, job *river.Job[ProbeArgs]) error {
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if _, err := eventlog.Append(ctx, tx, events.QueueProbed, "", events.QueueProbedPayload{JobID: job.ID, Note: job.Args.Note}); err != nil {
			return err
		}
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
			return fmt.Errorf("complete probe job %d: %w", job.ID, err)
		}
		return nil
	})
}
