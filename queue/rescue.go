package queue

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// RescueDead runs at start, after the runtime and the executor have recovered their own jobs
// and before the queue fetches, when the data directory's lock proves no other buddi works:
// every job still marked running belonged to the process that died, and is made available to
// run again now (sweeps, wakes and occurrences are safe to run again), instead of counting as
// running until River's rescuer takes it, long after. It returns how many it rescued.
func RescueDead(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	tag, err := pool.Exec(ctx, `UPDATE river.river_job SET state = 'available', scheduled_at = now(),
		metadata = metadata || jsonb_build_object('rescued_at_start', now())
		WHERE state = 'running'`)
	if err != nil {
		return 0, fmt.Errorf("rescue the jobs buddi stopped in: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
