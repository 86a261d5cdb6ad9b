package main

import (
	"fmt"

	"buddi/queue"
)

type pauseCmd struct{}

// Run pauses all work: no job is fetched and no sentinel is due until buddi resume.
func (pauseCmd) Run(env *runEnv) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	client, err := queue.InsertOnly(src.Pool)
	if err != nil {
		return err
	}
	if err := queue.Pause(env.ctx, src.Pool, client); err != nil {
		return err
	}
	fmt.Fprintln(env.stdout, "All work is paused: nothing runs until `buddi resume` (a restart stays paused).")
	return nil
}

type resumeCmd struct{}

// Run starts all work again.
func (resumeCmd) Run(env *runEnv) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	client, err := queue.InsertOnly(src.Pool)
	if err != nil {
		return err
	}
	if err := queue.Resume(env.ctx, src.Pool, client); err != nil {
		return err
	}
	fmt.Fprintln(env.stdout, "Work resumed.")
	return nil
}
