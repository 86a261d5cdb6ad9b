package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"buddi/internal/text"
	"buddi/queue"
)

type jobsCmd struct {
	List    jobsListCmd    `cmd:"" default:"withargs" help:"List failed jobs, grouped by cause (dismissed ones with --all)."`
	Retry   jobsRetryCmd   `cmd:"" help:"Run a failed job again (lifting its attempt cap), or all of them."`
	Dismiss jobsDismissCmd `cmd:"" help:"Keep a failed job on record but stop counting it, or all of them."`
	Cancel  jobsCancelCmd  `cmd:"" help:"Cancel a job that has not finished."`
}

type jobsListCmd struct {
	State string `enum:"failed,dismissed,all" default:"failed" help:"failed (still counted), dismissed (by you, or older than 14 days), or all."`
	All   bool   `help:"The same as --state all."`
	Kind  string `help:"Only jobs of this kind (run.start, action.execute, …)."`
	JSON  bool   `help:"Print JSON: {\"failed\":[…],\"causes\":[…]}."`
}

func (c jobsListCmd) Run(env *runEnv) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	if c.All {
		c.State = "all"
	}
	jobs, err := queue.Failed(env.ctx, src.Pool, c.State != "failed", 500)
	if err != nil {
		return err
	}
	kept := jobs[:0]
	for _, j := range jobs {
		if (c.Kind == "" || j.Kind == c.Kind) && (c.State != "dismissed" || j.Dismissed) {
			kept = append(kept, j)
		}
	}
	jobs = kept
	if jobs == nil {
		jobs = []queue.FailedJob{}
	}
	causes := queue.Group(jobs, time.Now())
	if c.JSON {
		return writeJSON(env, map[string]any{"failed": jobs, "causes": causes})
	}
	if len(jobs) == 0 {
		fmt.Fprintln(env.stdout, "No failed jobs.")
		return nil
	}
	byID := map[int64]queue.FailedJob{}
	for _, j := range jobs {
		byID[j.ID] = j
	}
	for _, cause := range causes {
		why := cause.Why
		if cause.Passed {
			why += " It has plausibly passed: retry."
		}
		fmt.Fprintf(env.stdout, "%d failed: %s\n", len(cause.Jobs), why)
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		for _, id := range cause.Jobs {
			j := byID[id]
			state := j.State
			if j.Dismissed {
				state += " (dismissed)"
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%d attempts\t%s\n", j.ID, j.Kind, state, j.Attempts, j.CreatedAt.Local().Format("Jan 2 15:04"))
		}
		_ = tw.Flush()
	}
	fmt.Fprintln(env.stdout, "Retry with `buddi jobs retry ID` (or --all); stop counting them with `buddi jobs dismiss ID` (or --all).")
	return nil
}

// checkTarget checks what a retry or dismiss names, before anything is opened: one job id
// (returned), or --all (0).
func checkTarget(id string, all bool) (int64, error) {
	if (id == "") == !all {
		return 0, &exitError{code: 2, err: errors.New("name one job id, or give --all")}
	}
	if all {
		return 0, nil
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return 0, &exitError{code: 2, err: fmt.Errorf("%q is not a job id: `buddi jobs` lists them", id)}
	}
	return n, nil
}

// jobTargets are the ids a retry or dismiss names: the one checked, or (0) every failed job
// still counted.
func jobTargets(ctx context.Context, pool *pgxpool.Pool, one int64) ([]int64, error) {
	if one != 0 {
		return []int64{one}, nil
	}
	jobs, err := queue.Failed(ctx, pool, false, 500)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids, nil
}

// withQueue opens the database and an insert-only queue client for a command that changes
// jobs (the serving buddi runs them).
func withQueue(env *runEnv, do func(pool *pgxpool.Pool, client *river.Client[pgx.Tx]) error) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	client, err := queue.InsertOnly(src.Pool)
	if err != nil {
		return err
	}
	return do(src.Pool, client)
}

type jobsRetryCmd struct {
	ID   string `arg:"" optional:"" help:"The job's id."`
	All  bool   `help:"Every failed job still counted."`
	JSON bool   `name:"json" help:"Print JSON: {\"ok\",\"ids\"}, the jobs retried."`
}

func (c jobsRetryCmd) Run(env *runEnv) error {
	one, err := checkTarget(c.ID, c.All)
	if err != nil {
		return err
	}
	return withQueue(env, func(pool *pgxpool.Pool, client *river.Client[pgx.Tx]) error {
		ids, err := jobTargets(env.ctx, pool, one)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := queue.Retry(env.ctx, pool, client, id); err != nil {
				return jobExit(err)
			}
		}
		return report(env, c.JSON, acted(map[string]any{"ids": ids}),
			"retrying %d %s; buddi serve runs %s", len(ids), text.Plural(len(ids), "job"), them(len(ids)))
	})
}

type jobsDismissCmd struct {
	ID   string `arg:"" optional:"" help:"The job's id."`
	All  bool   `help:"Every failed job still counted."`
	JSON bool   `name:"json" help:"Print JSON: {\"ok\",\"ids\"}, the jobs dismissed."`
}

func (c jobsDismissCmd) Run(env *runEnv) error {
	one, err := checkTarget(c.ID, c.All)
	if err != nil {
		return err
	}
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	ids, err := jobTargets(env.ctx, src.Pool, one)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := queue.Dismiss(env.ctx, src.Pool, id, "terminal"); err != nil {
			return jobExit(err)
		}
	}
	return report(env, c.JSON, acted(map[string]any{"ids": ids}),
		"dismissed %d %s: kept on record, no longer counted", len(ids), text.Plural(len(ids), "job"))
}

type jobsCancelCmd struct {
	ID   int64 `arg:"" help:"The job's id."`
	JSON bool  `name:"json" help:"Print JSON: {\"ok\",\"id\",\"kind\",\"state\"}."`
}

func (c jobsCancelCmd) Run(env *runEnv) error {
	return withQueue(env, func(_ *pgxpool.Pool, client *river.Client[pgx.Tx]) error {
		row, err := client.JobCancel(env.ctx, c.ID)
		if err != nil {
			if strings.Contains(err.Error(), "not found") {
				return &exitError{code: 1, err: fmt.Errorf("no job %d: `buddi jobs --all` lists the failed ones", c.ID)}
			}
			return err
		}
		return report(env, c.JSON, acted(map[string]any{"id": row.ID, "kind": row.Kind, "state": row.State}),
			"job %d (%s) is %s", row.ID, row.Kind, row.State)
	})
}

func jobExit(err error) error {
	if errors.Is(err, queue.ErrNotFailed) {
		return &exitError{code: 1, err: fmt.Errorf("%v: `buddi jobs --all` lists the failed ones", err)}
	}
	return err
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
