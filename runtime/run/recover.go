package run

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/executor"
)

// Recover runs at start, before the queue fetches a job, when the data directory's lock
// proves that no other buddi works: a run job still running belonged to the process that
// died. In one transaction a run, its dead jobs are ended (left running, they would count
// as running until River's rescue, and be worked a second time then), the run is enqueued
// again at once (the loop picks up where the transcript says and repeats no effect) and a
// run.recovered event says so; a second call finds nothing and writes nothing. It returns
// how many runs it recovered. The dead jobs are ended in the transaction that enqueues their
// successor.
func (r *Runner) Recover(ctx context.Context) (int, error) {
	rows, err := r.Pool.Query(ctx, `SELECT id, args FROM river.river_job
		WHERE state = 'running' AND kind IN ('run.start', 'run.resume') ORDER BY id`)
	if err != nil {
		return 0, fmt.Errorf("find the runs buddi stopped in: %w", err)
	}
	type dead struct {
		id   int64
		args []byte
	}
	jobs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (dead, error) {
		var d dead
		err := row.Scan(&d.id, &d.args)
		return d, err
	})
	if err != nil {
		return 0, fmt.Errorf("find the runs buddi stopped in: %w", err)
	}
	var order []string           // the runs, in the order of their first dead job
	byRun := map[string][]dead{} // a run may have left a start and a resume job
	var unreadable []int64
	for _, j := range jobs {
		var a struct {
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal(j.args, &a); err != nil || a.RunID == "" {
			unreadable = append(unreadable, j.id)
			continue
		}
		if byRun[a.RunID] == nil {
			order = append(order, a.RunID)
		}
		byRun[a.RunID] = append(byRun[a.RunID], j)
	}
	if len(unreadable) > 0 {
		if err := pgx.BeginFunc(ctx, r.Pool, func(tx pgx.Tx) error {
			return endDead(ctx, tx, unreadable, "buddi stopped while it ran, and its arguments name no run")
		}); err != nil {
			return 0, err
		}
	}
	recovered := 0
	for _, runID := range order {
		left := byRun[runID]
		m, found, err := r.readMeta(ctx, runID)
		if err != nil {
			return recovered, err
		}
		args := StartArgs{RunID: runID}
		if found {
			args.ConversationID, args.Agent, args.Surface, args.Interactive = m.ConversationID, m.Agent, m.Surface, m.Interactive
		} else {
			_ = json.Unmarshal(left[0].args, &args) // they parsed above; the run's own record is missing
		}
		args.Recovery = r.now().UnixNano()
		ids := make([]int64, len(left))
		for i, j := range left {
			ids[i] = j.id
		}
		err = pgx.BeginFunc(ctx, r.Pool, func(tx pgx.Tx) error {
			if err := endDead(ctx, tx, ids, "buddi stopped while it ran; the run was enqueued again at the next start"); err != nil {
				return err
			}
			if err := Enqueue(ctx, tx, r.Insert, args); err != nil {
				return err
			}
			_, err := eventlog.Append(ctx, tx, events.RunRecovered, args.ConversationID, events.RunRecoveredPayload{RunID: args.RunID, DeadJob: ids[0], DeadJobs: ids})
			return err
		})
		if err != nil {
			return recovered, fmt.Errorf("recover run %s: %w", runID, err)
		}
		recovered++
	}
	return recovered, nil
}

// endDead ends the dead jobs ids in tx, saying why.
func endDead(ctx context.Context, tx pgx.Tx, ids []int64, why string) error {
	for _, id := range ids {
		if _, err := executor.EndDeadJob(ctx, tx, id, why); err != nil {
			return err
		}
	}
	return nil
}
