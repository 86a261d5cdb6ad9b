package sandbox

import (
	"errors"
	"fmt"
)

// ErrUnavailable is a machine where no box can be made: not Linux, a kernel without Landlock
// or with one older than ABI 6, no mount namespace for this account. Nothing is run unboxed
// instead; an UnavailableError says which.
var ErrUnavailable = errors.New("sandbox: unavailable")

// UnavailableError says why no box can be made here, in one sentence.
type UnavailableError struct {
	// Reason is the sentence, e.g. "the kernel's Landlock is ABI 4 and the box needs 6".
	Reason string
}

// Error returns the reason with what it means for the command.
func (e *UnavailableError) Error() string {
	return "sandbox: commands cannot be boxed on this machine: " + e.Reason
}

// Unwrap returns ErrUnavailable.
func (e *UnavailableError) Unwrap() error { return ErrUnavailable }

// ExitLaunchFailed is the exit status of a launcher that could not apply the box. It also
// writes one line, "sandbox: <stage>: <reason>", to its status descriptor (or to stderr
// when it has none); Start turns that line into a LaunchError. The command never ran.
const ExitLaunchFailed = 125

// LaunchError is a box that could not be applied to one command, so the command was not run.
type LaunchError struct {
	// Stage is the step that failed: "policy", "paths", "mounts", "landlock", "privileges",
	// "exec" (the program could not be started inside the box) or "internal".
	Stage string
	// Reason is what the launcher reported.
	Reason string
}

// Error names the stage and the reason, and says that nothing ran.
func (e *LaunchError) Error() string {
	return fmt.Sprintf("sandbox: the command was not run: its box could not be applied (%s: %s)", e.Stage, e.Reason)
}
