package actors

import "time"

// Kinds of SupervisorEvent.
const (
	// EventRestarted: the supervisor restarted the failed child (for AllForOne,
	// all its children).
	EventRestarted = "supervisor.restarted"
	// EventStopped: the failed child was stopped, because its budget was
	// exhausted (Escalated is then true) or because the system is shutting down.
	EventStopped = "supervisor.stopped"
)

// SupervisorEvent is one supervisor decision.
type SupervisorEvent struct {
	// Kind is EventRestarted or EventStopped.
	Kind string
	// Supervisor is the path of the deciding supervisor, e.g. "root/surfaces".
	// It is empty when a failure left a top-level supervisor and the system
	// itself stopped it.
	Supervisor string
	// Child is the path of the failed child, e.g. "root/surfaces/dashboard".
	Child string
	// Reason is the panic value or error as text.
	Reason string
	// Restarts counts the restarts of this child inside the budget's window,
	// after this decision.
	Restarts int
	// Escalated is true when the budget was exhausted and the failure went up
	// to the supervisor's parent.
	Escalated bool
	// At is when the decision was taken.
	At time.Time
}

// EventSink gets every supervisor decision. It is called on the supervisor's
// goroutine, so it must not block for long; a panic in it is logged and
// ignored.
type EventSink func(SupervisorEvent)
