package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/eventlog"
	"buddi/migrations"
)

// States are River's job states, in the order reports show them.
var States = []string{"available", "scheduled", "pending", "running", "retryable", "completed", "cancelled", "discarded"}

// QueueInfo is one named queue.
type QueueInfo struct {
	Name   string `json:"name"`   // the queue's name
	Paused bool   `json:"paused"` // paused in River (paused_at is set)
}

// Stats is the queue's state as the database holds it.
type Stats struct {
	Queues []QueueInfo      `json:"queues"` // in name order
	Jobs   map[string]int64 `json:"jobs"`   // by state, every state present
	Failed int64            `json:"failed"` // jobs River discarded: the work will not happen
}

// ReadStats reads Stats from the database; it needs no running client, so buddi doctor can
// use it on its own.
func ReadStats(ctx context.Context, q eventlog.Querier) (Stats, error) {
	st := Stats{Jobs: map[string]int64{}, Queues: []QueueInfo{}}
	for _, s := range States {
		st.Jobs[s] = 0
	}
	rows, err := q.Query(ctx, fmt.Sprintf(`SELECT state::text, count(*) FROM %s.river_job GROUP BY state`, migrations.RiverSchema))
	if err != nil {
		return st, fmt.Errorf("read job counts: %w", err)
	}
	counts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct {
		state string
		n     int64
	}, error) {
		var c struct {
			state string
			n     int64
		}
		err := r.Scan(&c.state, &c.n)
		return c, err
	})
	if err != nil {
		return st, fmt.Errorf("read job counts: %w", err)
	}
	for _, c := range counts {
		st.Jobs[c.state] = c.n
	}
	st.Failed = st.Jobs["discarded"]
	rows, err = q.Query(ctx, fmt.Sprintf(`SELECT name, paused_at FROM %s.river_queue ORDER BY name`, migrations.RiverSchema))
	if err != nil {
		return st, fmt.Errorf("read queues: %w", err)
	}
	st.Queues, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (QueueInfo, error) {
		var qi QueueInfo
		var paused *time.Time
		err := r.Scan(&qi.Name, &paused)
		qi.Paused = paused != nil
		return qi, err
	})
	if err != nil {
		return st, fmt.Errorf("read queues: %w", err)
	}
	return st, nil
}
