// Package actors is buddi's small API over protoactor-go: a supervision tree of
// actors, so that nothing else imports protoactor and it can be swapped later.
//
// A System holds a tree. Supervisors (NewSupervisor) are inner nodes with a
// Strategy; workers (Spawn) are leaves running an Actor. Every path is the
// slash-joined names from the top, e.g. "root/surfaces/dashboard", and names
// are unique among siblings.
//
// # Failure
//
// A failure is a panic inside an Actor's Receive (or inside the function that
// produces it). protoactor recovers it and hands it to the parent supervisor,
// which applies its Strategy:
//
//   - OneForOne restarts only the failed child, AllForOne restarts all of the
//     supervisor's children. A restart builds a new instance from the producer,
//     which receives Started again; the failed one first receives Restarting.
//   - The Budget allows MaxRestarts restarts of one child within Within. The
//     next failure stops the child (AllForOne: all children) and escalates the
//     failure to the supervisor's own parent, which applies its strategy to the
//     supervisor: restart it with its whole subtree (the children are built
//     again from their producers) or stop it and escalate further.
//   - A failure that leaves a top-level supervisor stops it and arrives on
//     Escalations: the process should then shut down.
//
// Every decision goes to the EventSink as a SupervisorEvent, and Tree shows the
// result. After Shutdown has begun, supervisors stop failed children instead
// of restarting them.
//
// A panic in Receive never kills the process, but a panic in a goroutine does:
// an Actor must not start goroutines that can panic. Work done on another
// goroutine should recover its own panics and report back with a message.
//
// # Messages
//
// Actors talk by Send. System.Request asks from outside and waits for
// Context.Respond. An actor must never block inside Receive on another actor
// (protoactor deadlocks, issue #795): System.Spawn, NewSupervisor, Request,
// Stop and Shutdown wait for other actors and are for callers outside the
// tree, never for Receive. Lifecycle messages (Started, Restarting, Stopping,
// Stopped, Drain) arrive through Receive like any other.
//
// # Shutdown
//
// Shutdown sends Drain down the tree (parents before children) and waits
// briefly for each actor to take it, then stops the actors from the leaves up,
// each level with its own deadline, without relying on protoactor's fixed
// 10-second stop futures or on ActorSystem.Shutdown, which stops nothing.
package actors
