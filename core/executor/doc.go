// Package executor is the only module that authorizes and performs effects (seed 004,
// "Process boundaries"). A proposed call passes the registry's gate; an auto or session call
// runs at once; a gated call becomes an immutable action and a pending approval, and runs
// only through ExecuteApproved, once approved, from a queue job enqueued in the same
// transaction as the decision.
//
// Before dispatch the executor describes the effect again and refuses an action whose hash
// no longer matches: it ends as refused and never leaves the machine. The effect ledger
// (core.effect_attempts) records the envelope before dispatch (for a tool that reports its
// dispatch, plugins.Dispatch, as its effect begins); a timeout or a crash after dispatch
// leaves the attempt unknown, shown for review and never retried, and one before it leaves no
// attempt, so the call can run again. Once the effect has happened its outcome is held in
// memory while the database does not answer, and written when it does.
//
// Recover, at start, ends the jobs a stopped buddi left running and settles each action they
// held by its ledger.
package executor
