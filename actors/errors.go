package actors

import (
	"errors"
	"fmt"
)

var (
	// ErrShutdown is returned for work asked of a System whose Shutdown has
	// begun.
	ErrShutdown = errors.New("actors: system is shutting down")
	// ErrNotRunning is returned when the actor addressed has stopped or stops
	// before answering.
	ErrNotRunning = errors.New("actors: actor is not running")
	// ErrStopTimeout is returned by Shutdown when some actor did not stop by
	// its deadline.
	ErrStopTimeout = errors.New("actors: actor did not stop in time")
)

// NameTakenError is returned when a sibling already has the name asked for.
type NameTakenError struct {
	// Path is the path that is taken.
	Path string
}

// Error implements error.
func (e *NameTakenError) Error() string {
	return fmt.Sprintf("actors: name taken: %s", e.Path)
}
