package run

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"buddi/core/eventlog"
)

// Recover runs at start, when no other buddi can be working (the data directory's lock
// says so): a run job still marked running belonged to the process that died. Its run is
// enqueued again at once (the loop picks up where the transcript says, and repeats no
// effect), and the dead job is cancelled, so River's rescue, an hour later, does not run it
// a second time. It returns how many runs it recovered.
func (r *Runner) Recover(ctx context.Context, client *river.Client[pgx.Tx]) (int, error) {
	rows, err := r.Pool.Query(ctx, `SELECT id, kind, args FROM river.river_job
		WHERE state = 'running' AND kind IN ('run.start', 'run.resume') ORDER BY id`)
	if err != nil {
		return 0, fmt.Errorf("find the runs buddi stopped in: %w", err)
	}
	type dead struct {
		id   int64
		kind string
		args []byte
	}
	jobs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (dead, error) {
		var d dead
		err := row.Scan(&d.id, &d.kind, &d.args)
		return d, err
	})
	if err != nil {
		return 0, fmt.Errorf("find the runs buddi stopped in: %w", err)
	}
	recovered := map[string]bool{}
	for _, j := range jobs {
		var a struct {
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal(j.args, &a); err != nil || a.RunID == "" {
			continue
		}
		if _, err := client.JobCancel(ctx, j.id); err != nil {
			return len(recovered), fmt.Errorf("cancel the dead job %d: %w", j.id, err)
		}
		if recovered[a.RunID] {
			continue
		}
		m, found, err := r.readMeta(ctx, a.RunID)
		if err != nil {
			return len(recovered), err
		}
		args := StartArgs{RunID: a.RunID}
		if found {
			args.ConversationID, args.Agent, args.Surface, args.Interactive = m.ConversationID, m.Agent, m.Surface, m.Interactive
		} else if err := json.Unmarshal(j.args, &args); err != nil {
			continue
		}
		args.Recovery = r.now().UnixNano()
		err = pgx.BeginFunc(ctx, r.Pool, func(tx pgx.Tx) error {
			if err := Enqueue(ctx, tx, r.Insert, args); err != nil {
				return err
			}
			_, err := eventlog.Append(ctx, tx, "run.recovered", args.ConversationID, map[string]any{"run_id": args.RunID, "dead_job": j.id})
			return err
		})
		if err != nil {
			return len(recovered), err
		}
		recovered[a.RunID] = true
	}
	return len(recovered), nil
}
