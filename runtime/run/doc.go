// Package run is the agent loop and the queue jobs that carry it (seed 004, "Queue,
// concurrency, recovery"). A run answers one turn of a conversation: it streams a model step,
// proposes each tool call through the trust core (it never executes an effect itself),
// writes every answer to the transcript, and steps again until the model stops calling
// tools. A gated call suspends the run durably: its job ends, and the owner's decision
// enqueues core/executor's run.resume job.
//
// Recovery never repeats an effect. Each call is proposed with its call id: a rerun finds
// the action it became (core.actions is unique on run and call), the answer already in the
// transcript (core.messages is unique on run and call), or the intent without an answer, which
// it reports as unknown instead of calling the tool again.
//
// A failure is classified over its whole cause chain (transient, permanent, unknown), retried
// within the run's horizon (interactive: 3 attempts in 15 minutes; unattended: 8 over rising
// delays in 6 hours, unknown on the short horizon only), and otherwise closed: dangling calls
// answered, a marker written, one sentence for the owner, a retry offered only when honest.
package run
