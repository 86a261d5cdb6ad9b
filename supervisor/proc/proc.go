// Package proc is the contract between the supervision tree's process host
// (supervisor.ProcessHost), which runs each workspace process as an actor, and the developer
// plugin, which starts the processes and keeps their rows. It imports nothing of buddi, so
// the plugin can name it without importing the tree.
//
// A process's actor owns it: the actor's work takes over the process (Spec.First) or starts
// it again (Spec.Start) and returns when it exits, so the exit arrives at the actor as a
// message. A clean exit ends the actor; a crash fails it, and the workspace's supervisor
// restarts it with backoff within the workspace's budget, then gives up and tells the owner.
// The host's record of what runs (Status) is kept by the actors themselves; the plugin's
// table is its durable copy, written through Spec.Start and Spec.Record.
package proc

import (
	"context"
	"errors"
	"time"
)

// Proc is one running OS process (the developer plugin wraps spawn.Process as one).
type Proc interface {
	// Pid is its process id, which leads the process group it was started in.
	Pid() int
	// Done is closed once it has exited.
	Done() <-chan struct{}
	// Exit says how it ended, once Done is closed: nil for a clean exit (status 0),
	// ErrStopped when someone stopped it and recorded that (the owner's command line), or
	// an error saying how it failed ("exited with status 1").
	Exit() error
	// Stop ends it and its group, killing it after grace, and returns once it has exited.
	Stop(grace time.Duration) error
}

// ErrStopped is the end of a process that was stopped by someone and recorded as stopped
// (from another buddi process, or while it waited to be started again): not a crash.
var ErrStopped = errors.New("proc: stopped and recorded as stopped")

// ErrNoProcess means no such process runs under the host.
var ErrNoProcess = errors.New("proc: no such process runs")

// Spec is one process to run under supervision.
type Spec struct {
	// Workspace is whose it is (the agent); its actor is workspaces/<Workspace>/<Name>.
	Workspace string
	// Name names it, unique across the installation while it runs.
	Name string
	// Port is the port it said it listens on, 0 for none.
	Port int
	// First is the process as it runs now: just started by the caller, or found still
	// running when buddi started. The actor's first incarnation takes it over.
	First Proc
	// Start starts it again after a crash, with the same command, and records the new
	// process in its row. It returns ErrStopped when the row says it was stopped meanwhile.
	// Nil: it is never started again, and any end of it is final (a process found running at
	// buddi's start: buddi no longer holds what started it, nor its exit status).
	Start func(ctx context.Context) (Proc, error)
	// Record writes what the host learnt to the durable copy (the row): a crash before a
	// restart, a clean exit, a give-up. It is called on a goroutine of its own, once per
	// event, and must bound its own time. Nil records nothing.
	Record func(ctx context.Context, ev Event)
}

// EventKind is what happened to a supervised process.
type EventKind string

// The kinds of Event.
const (
	// Crashed: it failed (Reason) and its supervisor will start it again after a backoff.
	Crashed EventKind = "crashed"
	// Exited: it ended cleanly, or, not restartable, ended at all; it is no longer supervised.
	Exited EventKind = "exited"
	// GaveUp: it crashed once more than the workspace's budget allows; it is no longer
	// supervised, and Sentence tells the owner.
	GaveUp EventKind = "gave_up"
)

// Event is one change the host reports through Spec.Record.
type Event struct {
	// Kind is Crashed, Exited or GaveUp.
	Kind EventKind
	// Workspace and Name say which process.
	Workspace, Name string
	// Reason is how it last ended ("exited with status 1"), empty for a clean exit.
	Reason string
	// Restarts counts its restarts inside the budget's window so far.
	Restarts int
	// Sentence is one sentence for the owner (GaveUp and Exited).
	Sentence string
}

// States of a Status.
const (
	// StateRunning: its process runs (Pid).
	StateRunning = "running"
	// StateRestarting: it crashed and waits out its backoff, or is being started again.
	StateRestarting = "restarting"
)

// Status is one supervised process as its actor last reported it.
type Status struct {
	// Workspace and Name say which process.
	Workspace, Name string
	// State is StateRunning or StateRestarting.
	State string
	// Pid is the running process's id; 0 unless State is StateRunning.
	Pid int
	// Port is the port it said it listens on, 0 for none.
	Port int
	// Restarts counts the restarts since it was first started.
	Restarts int
	// Reason is how it last crashed, empty when it never has.
	Reason string
	// Since is when it entered State.
	Since time.Time
}
