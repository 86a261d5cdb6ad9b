package main

import (
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"buddi/queue"
)

type pauseCmd struct {
	JSON bool `name:"json" help:"Print JSON: {\"ok\",\"paused\"}."`
}

// Run pauses all work: no job is fetched and no sentinel is due until buddi resume.
func (c pauseCmd) Run(env *runEnv) error {
	return withQueue(env, func(pool *pgxpool.Pool, client *river.Client[pgx.Tx]) error {
		if err := queue.Pause(env.ctx, pool, client); err != nil {
			return err
		}
		return report(env, c.JSON, acted(map[string]any{"paused": true}),
			"All work is paused: nothing runs until `buddi resume` (a restart stays paused).")
	})
}

type resumeCmd struct {
	JSON bool `name:"json" help:"Print JSON: {\"ok\",\"paused\"}."`
}

// Run starts all work again.
func (c resumeCmd) Run(env *runEnv) error {
	return withQueue(env, func(pool *pgxpool.Pool, client *river.Client[pgx.Tx]) error {
		if err := queue.Resume(env.ctx, pool, client); err != nil {
			return err
		}
		return report(env, c.JSON, acted(map[string]any{"paused": false}), "Work resumed.")
	})
}
