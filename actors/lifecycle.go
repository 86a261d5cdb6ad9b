package actors

// Started is the first message of every actor instance: at its first start and
// after each restart. A panic while handling it is a failure like any other.
type Started struct{}

// Restarting is delivered to a failed instance just before it is replaced by a
// new one. Reason is the failure that caused the restart (for AllForOne, the
// failure of the sibling). A panic here is logged and ignored.
type Restarting struct {
	Reason string // the failure, as text; empty when none was recorded
}

// Stopping is delivered when the actor is about to stop, before its children
// stop. A panic here is logged and ignored.
type Stopping struct{}

// Stopped is the last message an actor receives. A panic here is logged and
// ignored.
type Stopped struct{}

// Drain is sent down the tree at shutdown before any actor stops: stop taking
// new work and finish or hand off what is in flight. A panic here is logged and
// ignored.
type Drain struct{}
