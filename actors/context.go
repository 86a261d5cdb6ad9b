package actors

import (
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
)

// Actor is a worker's behaviour. Receive handles one message at a time on the
// actor's own goroutine; a panic in it is a failure that the parent supervisor
// handles. Receive must not block on another actor, and must not start
// goroutines that can panic (that kills the process).
type Actor interface {
	// Receive handles the one message c carries.
	Receive(c *Context)
}

// Ref addresses an actor. It stays valid across restarts, and across a
// rebuild of the subtree by a restarted supervisor.
type Ref struct {
	pid  *actor.PID
	path string
}

// Path is the actor's path, e.g. "root/surfaces/dashboard".
func (r *Ref) Path() string { return r.path }

// String returns the path.
func (r *Ref) String() string { return r.path }

// Context is what Receive gets for the current message. It is valid only
// during that call: do not keep it or use it from another goroutine.
type Context struct {
	actx actor.Context
	path string
	self *Ref
	log  *slog.Logger
	msg  any
	req  *request
}

// Message is the message being handled: one of the lifecycle messages
// (Started, Restarting, Stopping, Stopped, Drain) or what a sender sent.
func (c *Context) Message() any { return c.msg }

// Self is this actor's Ref.
func (c *Context) Self() *Ref {
	if c.self == nil {
		c.self = &Ref{pid: c.actx.Self(), path: c.path}
	}
	return c.self
}

// Path is this actor's path.
func (c *Context) Path() string { return c.path }

// Log is the system's logger with this actor's path.
func (c *Context) Log() *slog.Logger { return c.log }

// Respond answers the System.Request being handled. The first answer wins;
// Respond outside a request is logged and dropped.
func (c *Context) Respond(v any) {
	if c.req == nil {
		c.log.Warn("respond without a request: dropped", slog.String("message", typeName(c.msg)))
		return
	}
	c.req.answer(v, nil)
}

// Send delivers msg to another actor without waiting. A nil ref or msg is
// dropped.
func (c *Context) Send(to *Ref, msg any) {
	if to == nil || msg == nil {
		c.log.Warn("send: nil ref or message dropped", slog.Any("to", to))
		return
	}
	c.actx.Send(to.pid, msg)
}
