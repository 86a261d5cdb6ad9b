package executor

import "time"

// SetOutcomeRetry shortens e's wait for one write of an outcome and tells retried to each
// write that failed and is tried again.
func SetOutcomeRetry(e *Executor, attempt time.Duration, retried func(what string, err error)) {
	e.attemptTimeout, e.onRetry = attempt, retried
}
