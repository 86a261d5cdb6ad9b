// Package conversation owns core's conversations (seed 004, "Conversations, questions and
// offered actions"): the transcript (core.messages), the run in flight, the input that joins
// a working run (core.pending_input: pending → leased → delivered, or pending → promoted),
// held questions, and the lifetime judged when the owner writes (idle time and size).
//
// It enqueues nothing itself: the caller passes the function that puts a run's job in the
// same transaction, so a message and the run that answers it commit together.
package conversation
