package actors

import (
	"errors"
	"fmt"
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
	actx  actor.Context
	sys   *System
	beh   *behaviour
	path  string
	self  *Ref
	log   *slog.Logger
	msg   any
	req   *request
	spawn func(spec) (*Ref, error) // set for a supervising actor: spawns a child in its context
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

// Reply answers a System.Request after the Receive that took it has returned,
// from any goroutine; the first answer wins. When the actor restarts or stops
// before answering, the requester gets an error wrapping ErrNotRunning.
type Reply struct {
	req *request
	beh *behaviour
}

// Answer gives the requester v.
func (r *Reply) Answer(v any) {
	if r == nil || r.req == nil {
		return
	}
	r.beh.forget(r.req)
	r.req.answer(v, nil)
}

// Fail gives the requester err.
func (r *Reply) Fail(err error) {
	if r == nil || r.req == nil {
		return
	}
	r.beh.forget(r.req)
	r.req.answer(nil, err)
}

// Defer takes the System.Request being handled to answer later through the
// Reply. Outside a request it returns a Reply whose answers go nowhere.
func (c *Context) Defer() *Reply {
	if c.req == nil {
		return &Reply{}
	}
	req := c.req
	if !c.beh.promise(req) {
		req.answer(nil, fmt.Errorf("actors: %s is ending: %w", c.path, ErrNotRunning))
		return &Reply{}
	}
	return &Reply{req: req, beh: c.beh}
}

// Spawn starts a child of this actor, which must be a supervising actor
// (System.SpawnSupervisor): its strategy applies to the child. The child is
// the actor's own: when the actor restarts it is stopped and not built again
// (the new incarnation decides what to spawn). Spawn does not wait for the
// child's Started.
func (c *Context) Spawn(name string, produce func() Actor) (*Ref, error) {
	if c.spawn == nil {
		return nil, fmt.Errorf("actors: %s spawns %q: %w", c.path, name, errNoChildren)
	}
	if produce == nil {
		return nil, fmt.Errorf("actors: spawn %q: nil producer", name)
	}
	return c.spawn(spec{name: name, produce: produce, transient: true})
}

var errNoChildren = errors.New("only a supervising actor has children (System.SpawnSupervisor)")

// Stop stops the actor at ref and its subtree without waiting, and removes it
// from the tree once it has stopped: a restarted parent will not rebuild it.
// An actor may stop itself this way (it gets Stopping and Stopped after the
// current Receive returns).
func (c *Context) Stop(ref *Ref) {
	if ref == nil {
		return
	}
	c.sys.stopAsync(ref)
}

// Sender returns the system's Send, for a goroutine or timer of the actor's
// that must reach an actor after Receive has returned.
func (c *Context) Sender() func(to *Ref, msg any) { return c.sys.Send }
