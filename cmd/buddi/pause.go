package main

import (
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"buddi/queue"
)

type pauseCmd struct{}

// Run pauses all work: no job is fetched and no sentinel is due until buddi resume.
func (pauseCmd) Run(env *runEnv) error {
	return withQueue(env, func(pool *pgxpool.Pool, client *river.Client[pgx.Tx]) error {
		if err := queue.Pause(env.ctx, pool, client); err != nil {
			return err
		}
		fmt.Fprintln(env.stdout, "All work is paused: nothing runs until `buddi resume` (a restart stays paused).")
		return nil
	})
}

type resumeCmd struct{}

// Run starts all work again.
func (resumeCmd) Run(env *runEnv) error {
	return withQueue(env, func(pool *pgxpool.Pool, client *river.Client[pgx.Tx]) error {
		if err := queue.Resume(env.ctx, pool, client); err != nil {
			return err
		}
		fmt.Fprintln(env.stdout, "Work resumed.")
		return nil
	})
}
