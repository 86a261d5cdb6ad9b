package queue_test

import (
	"context"
	"testing"

	"buddi/internal/pgtest"
	"buddi/queue"
)

// A job left running by a killed buddi is made available at the next start, once; a job in
// any other state is left as it is.
func TestRescueDead(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	ins, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for range 2 {
		res, err := ins.Insert(ctx, flakyArgs{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Job.ID)
	}
	// What a kill -9 leaves: the first job running, worked by a process that is gone.
	if _, err := pool.Exec(ctx, `UPDATE river.river_job SET state = 'running', attempt = 1, attempted_at = now(), attempted_by = ARRAY['a-dead-buddi'] WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE river.river_job SET state = 'completed', finalized_at = now() WHERE id = $1`, ids[1]); err != nil {
		t.Fatal(err)
	}
	if n, err := queue.RescueDead(ctx, pool); err != nil || n != 1 {
		t.Fatalf("RescueDead = %d, %v; want 1", n, err)
	}
	var state string
	if err := pool.QueryRow(ctx, `SELECT state FROM river.river_job WHERE id = $1`, ids[0]).Scan(&state); err != nil || state != "available" {
		t.Fatalf("the dead job is %q (%v), want available", state, err)
	}
	if err := pool.QueryRow(ctx, `SELECT state FROM river.river_job WHERE id = $1`, ids[1]).Scan(&state); err != nil || state != "completed" {
		t.Fatalf("the finished job is %q (%v), want completed", state, err)
	}
	if n, err := queue.RescueDead(ctx, pool); err != nil || n != 0 {
		t.Fatalf("second RescueDead = %d, %v; want 0", n, err)
	}
}
