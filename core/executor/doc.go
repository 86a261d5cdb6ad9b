// Package executor is the only module that authorizes and performs effects (seed 004,
// "Process boundaries"). A proposed call passes the registry's gate; an auto or session call
// runs at once; a gated call becomes an immutable action and a pending approval, and runs
// only through ExecuteApproved, once approved, from a queue job enqueued in the same
// transaction as the decision.
//
// Before dispatch the executor describes the effect again and refuses an action whose hash
// no longer matches: it ends as refused and never leaves the machine. The effect ledger
// (core.effect_attempts) records the envelope before dispatch; a timeout or a crash after
// dispatch leaves the attempt unknown, shown for review and never retried.
package executor
