package supervisor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"buddi/actors"
)

// ConversationHost delivers a conversation's messages to its actor. Each open conversation is
// a supervising actor under root/conversations with a mailbox: it takes the turns asked of it
// (an owner's message, a resume after an approval, an offer taken, a wake: each reaches it as
// its run's queue job) one at a time, in the order they arrived, and runs each as its child, a
// run actor running the agent loop. A panic in a run's code is that actor's crash: restarted
// within RunStrategy's budget, and past it the turn fails with a CrashError while the
// conversation lives on. A conversation with nothing to do for Idle is passivated: it leaves
// the tree and costs nothing until its next message builds it again (its state is in the
// event log and the queue, never only in the actor).
type ConversationHost struct {
	sys    *actors.System
	parent *actors.Ref
	// Idle is how long a conversation waits for its next message before it is passivated.
	Idle time.Duration

	opening sync.Mutex // held while an actor is built
	mu      sync.Mutex // guards convs
	convs   map[string]*actors.Ref
}

// DefaultIdle is how long an idle conversation actor stays in memory.
const DefaultIdle = 30 * time.Second

// RunStrategy is each conversation's, over its runs: a run whose code panics is restarted
// (after a backoff) twice within a minute; a third crash fails the turn, contained in the
// conversation.
var RunStrategy = actors.Strategy{Kind: actors.OneForOne,
	Budget: actors.Budget{MaxRestarts: 2, Within: time.Minute, Backoff: 250 * time.Millisecond}, Contain: true}

// NewConversationHost returns a host over the tree's conversations supervisor.
func NewConversationHost(sys *actors.System, tree *Tree) *ConversationHost {
	return &ConversationHost{sys: sys, parent: tree.Conversations, Idle: DefaultIdle, convs: map[string]*actors.Ref{}}
}

// CrashError is a turn whose run actor crashed past its restart budget.
type CrashError struct {
	Run      string // the run
	Restarts int    // how often it was restarted before buddi gave up
	Reason   string // the last crash, with its stack
}

// Error says the run and its last crash.
func (e *CrashError) Error() string {
	return fmt.Sprintf("run %s crashed after %d restarts: %s", e.Run, e.Restarts, e.Reason)
}

// RunCrashed reports the crash for a caller that does not import this package.
func (e *CrashError) RunCrashed() (restarts int, reason string) { return e.Restarts, e.Reason }

// errPassivated answers a message that reached a conversation actor as it left the tree.
var errPassivated = errors.New("the conversation's actor is passivating")

// hostAttempts bounds how often Run reopens a conversation whose actor ended under it.
const hostAttempts = 4

// Run delivers the turn of run runID to conversation's actor and waits for its end: it runs
// after the conversation's earlier turns, as the run actor runID, and its error is the turn's.
// A cancelled ctx (the job's lease lost, buddi stopping) ends the wait and the turn.
func (h *ConversationHost) Run(ctx context.Context, conversation, runID string, turn func(ctx context.Context) error) error {
	return h.wait(ctx, conversation, runTurn{ctx: ctx, runID: runID, turn: turn})
}

// Join is Run for a run's first turn, which the owner's message may have delivered already
// (Deliver): while that turn runs or waits, Join waits for it; when it ended since without
// anyone waiting, Join gets its result at once (once). Only first turns join each other: a
// resumption after an approval is a turn of its own (Run), never mistaken for the first.
func (h *ConversationHost) Join(ctx context.Context, conversation, runID string, turn func(ctx context.Context) error) error {
	return h.wait(ctx, conversation, runTurn{ctx: ctx, runID: runID, turn: turn, join: true})
}

func (h *ConversationHost) wait(ctx context.Context, conversation string, msg runTurn) error {
	v, err := h.ask(ctx, conversation, msg)
	if err != nil {
		return err
	}
	res, _ := v.(turnResult)
	return res.err
}

// Deliver hands the turn of run runID to conversation's actor without waiting for it: the
// owner's message starts its run at once instead of when the queue fetches its job, and the
// job, which stays the durable record, joins the run when it comes (Run). The turn gets at
// most limit, and ends with buddi.
func (h *ConversationHost) Deliver(conversation, runID string, limit time.Duration, turn func(ctx context.Context) error) error {
	dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := h.ask(dctx, conversation, runTurn{ctx: context.Background(), limit: limit, runID: runID, turn: turn, detached: true, join: true})
	return err
}

// ask sends msg to conversation's actor and waits for its answer, building the actor again
// when it left the tree under the message.
func (h *ConversationHost) ask(ctx context.Context, conversation string, msg runTurn) (any, error) {
	var last error
	for range hostAttempts {
		ref, err := h.open(ctx, conversation)
		if err != nil {
			return nil, err
		}
		v, err := h.sys.Request(ctx, ref, msg)
		if err == nil {
			return v, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("run %s: %w", msg.runID, err)
		}
		if !errors.Is(err, actors.ErrNotRunning) && !errors.Is(err, errPassivated) {
			return nil, fmt.Errorf("run %s: %w", msg.runID, err)
		}
		// The actor left the tree (passivated, or stopped past its budget) before the turn
		// ended: a new one takes it, and the turn picks up where its transcript says.
		h.drop(conversation, ref)
		last = err
	}
	return nil, fmt.Errorf("run %s: the conversation's actor kept ending: %w", msg.runID, last)
}

// Stop stops the turn of run runID when it is the one running in conversation: its context is
// cancelled with cause. It reports false when that run is not running there (it ended, or
// another turn runs now: a Stop pressed as one turn ends never stops the next).
func (h *ConversationHost) Stop(conversation, runID string, cause error) bool {
	h.mu.Lock()
	ref := h.convs[conversation]
	h.mu.Unlock()
	if ref == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := h.sys.Request(ctx, ref, stopTurn{runID: runID, cause: cause})
	stopped, _ := v.(bool)
	return err == nil && stopped
}

// open returns the conversation's actor, building it when it is not in the tree.
func (h *ConversationHost) open(ctx context.Context, conversation string) (*actors.Ref, error) {
	if ref := h.lookup(conversation); ref != nil {
		return ref, nil
	}
	// One opening at a time, so an actor being built is never taken for one on its way out;
	// the map's own lock stays free for the actors that leave meanwhile.
	h.opening.Lock()
	defer h.opening.Unlock()
	var err error
	for range hostAttempts {
		if ref := h.lookup(conversation); ref != nil {
			return ref, nil
		}
		var self atomic.Pointer[actors.Ref]
		produce := func() actors.Actor {
			return &conversationActor{wait: h.Idle, gone: func() { h.drop(conversation, self.Load()) }}
		}
		var ref *actors.Ref
		ref, err = h.sys.SpawnSupervisor(h.parent, conversation, RunStrategy, produce)
		if err == nil {
			self.Store(ref)
			h.mu.Lock()
			h.convs[conversation] = ref
			h.mu.Unlock()
			return ref, nil
		}
		var taken *actors.NameTakenError
		if !errors.As(err, &taken) {
			break
		}
		// The conversation's previous actor is still on its way out: wait for it.
		if old := h.sys.Lookup(taken.Path); old != nil {
			if serr := h.sys.Stop(ctx, old); serr != nil {
				return nil, fmt.Errorf("open conversation %s: %w", conversation, serr)
			}
		}
	}
	return nil, fmt.Errorf("open conversation %s: %w", conversation, err)
}

func (h *ConversationHost) lookup(conversation string) *actors.Ref {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.convs[conversation]
}

// drop forgets ref as conversation's actor.
func (h *ConversationHost) drop(conversation string, ref *actors.Ref) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur := h.convs[conversation]; ref != nil && cur == ref {
		delete(h.convs, conversation)
	}
}

// Open counts the conversation actors in memory.
func (h *ConversationHost) Open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.convs)
}

// The conversation actor's messages.
type (
	// runTurn asks for a turn; the answer is a turnResult once it has ended.
	runTurn struct {
		ctx      context.Context
		runID    string
		turn     func(ctx context.Context) error
		detached bool          // answered at once; the result waits for the run's job (Deliver)
		join     bool          // a first turn: one delivered and its job's are the same turn
		limit    time.Duration // bounds the turn; 0: ctx alone does
	}
	turnResult struct{ err error }
	// stopTurn asks to stop the running turn of runID; the answer says whether it was.
	stopTurn struct {
		runID string
		cause error
	}
	// runEnded tells the conversation its run actor's turn returned.
	runEnded struct {
		path string
		err  error
	}
	// idleTick tells the conversation it may have been idle for its Idle.
	idleTick struct{ gen int }
)

// pendingTurn is a turn the conversation holds: waiting, or running as its child.
type pendingTurn struct {
	runTurn
	replies []*actors.Reply         // who waits for its end
	ctx     context.Context         // the turn's: its first caller's, cancelled by a stop
	cancel  context.CancelCauseFunc // stops the turn with a cause
	path    string                  // the run actor's, once it runs
	ref     *actors.Ref
}

// conversationActor serialises a conversation's turns.
type conversationActor struct {
	wait    time.Duration // Idle
	gone    func()        // tells the host this actor left the tree
	queue   []*pendingTurn
	running *pendingTurn
	seq     int         // numbers the run actors, so a run's next attempt never meets its last one's name
	idleGen int         // numbers the idle ticks: only the latest counts
	idle    *time.Timer // the pending idle tick, stopped with the actor
	leaving bool        // passivating: every message is refused, the host builds a new actor
	// ended keeps the results of delivered turns that ended before their job came for them
	// (oldest first, at most keepEnded): the job takes its result once.
	ended []endedTurn
}

// endedTurn is a delivered turn's result, waiting for its job.
type endedTurn struct {
	runID string
	err   error
}

// keepEnded bounds the results a conversation keeps for jobs still to come.
const keepEnded = 64

func (a *conversationActor) Receive(c *actors.Context) {
	switch m := c.Message().(type) {
	case actors.Started:
		a.armIdle(c)
	case runTurn:
		var reply *actors.Reply
		if m.detached {
			if a.leaving {
				c.Defer().Fail(errPassivated)
				return
			}
			c.Respond(true)
		} else {
			reply = c.Defer()
			if a.leaving {
				reply.Fail(errPassivated)
				return
			}
		}
		if m.join {
			if t := a.find(m.runID); t != nil { // delivered and its job came, or the other way round
				if reply != nil {
					t.replies = append(t.replies, reply)
				}
				return
			}
			if reply != nil {
				if err, ok := a.takeEnded(m.runID); ok {
					reply.Answer(turnResult{err: err})
					return
				}
			}
		}
		base, stopTimer := m.ctx, context.CancelFunc(func() {})
		if m.limit > 0 {
			base, stopTimer = context.WithTimeout(base, m.limit)
		}
		ctx, cancelCause := context.WithCancelCause(base)
		cancel := func(err error) { cancelCause(err); stopTimer() }
		t := &pendingTurn{runTurn: m, ctx: ctx, cancel: cancel}
		if reply != nil {
			t.replies = append(t.replies, reply)
		}
		a.queue = append(a.queue, t)
		a.next(c)
	case stopTurn:
		if a.running != nil && a.running.runID == m.runID {
			a.running.cancel(m.cause)
			c.Respond(true)
			return
		}
		c.Respond(false)
	case runEnded:
		if a.running == nil || a.running.path != m.path {
			return
		}
		a.finish(c, m.err)
	case actors.ChildFailed:
		if a.running == nil || a.running.path != m.Path {
			return
		}
		a.finish(c, &CrashError{Run: a.running.runID, Restarts: m.Restarts, Reason: m.Reason})
	case idleTick:
		if m.gen != a.idleGen || a.running != nil || len(a.queue) > 0 {
			return
		}
		a.leaving = true
		c.Stop(c.Self())
	case actors.Stopping, actors.Restarting:
		if a.idle != nil {
			a.idle.Stop()
		}
		a.leaving = true
		if a.running != nil {
			a.running.cancel(errors.New("the conversation's actor stopped"))
		}
		for _, t := range a.queue {
			t.cancel(context.Canceled)
		}
	case actors.Stopped:
		if a.gone != nil {
			a.gone()
		}
	}
}

// finish answers the running turn and starts the next. A delivered turn nobody waits for yet
// keeps its result for its job.
func (a *conversationActor) finish(c *actors.Context, err error) {
	t := a.running
	a.running = nil
	t.cancel(context.Canceled)
	for _, r := range t.replies {
		r.Answer(turnResult{err: err})
	}
	if len(t.replies) == 0 && t.join {
		if len(a.ended) == keepEnded {
			a.ended = a.ended[1:]
		}
		a.ended = append(a.ended, endedTurn{runID: t.runID, err: err})
	}
	c.Stop(t.ref)
	a.next(c)
}

// find returns the first turn of runID, running or waiting.
func (a *conversationActor) find(runID string) *pendingTurn {
	if a.running != nil && a.running.join && a.running.runID == runID {
		return a.running
	}
	for _, t := range a.queue {
		if t.join && t.runID == runID {
			return t
		}
	}
	return nil
}

// takeEnded returns, once, the result of runID's delivered turn that ended unawaited.
func (a *conversationActor) takeEnded(runID string) (error, bool) {
	for i, e := range a.ended {
		if e.runID == runID {
			a.ended = append(a.ended[:i:i], a.ended[i+1:]...)
			return e.err, true
		}
	}
	return nil, false
}

// next starts the first waiting turn whose caller still waits, when none runs.
func (a *conversationActor) next(c *actors.Context) {
	for a.running == nil && len(a.queue) > 0 {
		t := a.queue[0]
		a.queue = a.queue[1:]
		if err := context.Cause(t.ctx); err != nil {
			for _, r := range t.replies {
				r.Fail(err) // its job gave up waiting
			}
			continue
		}
		a.seq++
		name := fmt.Sprintf("%s.%d", t.runID, a.seq)
		self := c.Self()
		ref, err := c.Spawn(name, actors.Go("run "+t.runID, func(actorCtx context.Context) error {
			// The turn ends with its job (lease lost, buddi stopping), a stop, or its actor.
			stop := context.AfterFunc(actorCtx, func() { t.cancel(errors.New("the run's actor stopped")) })
			defer stop()
			return t.turn(t.ctx)
		}, actors.Finished(func(rc *actors.Context, err error) {
			rc.Send(self, runEnded{path: rc.Path(), err: err})
		})))
		if err != nil {
			t.cancel(context.Canceled)
			for _, r := range t.replies {
				r.Fail(fmt.Errorf("start run %s: %w", t.runID, err))
			}
			continue
		}
		t.ref, t.path = ref, ref.Path()
		a.running = t
	}
	if a.running == nil && len(a.queue) == 0 {
		a.armIdle(c)
	}
}

// armIdle schedules the check that passivates the conversation when nothing arrives.
func (a *conversationActor) armIdle(c *actors.Context) {
	a.idleGen++
	gen, self, send := a.idleGen, c.Self(), c.Sender()
	if a.idle != nil {
		a.idle.Stop()
	}
	a.idle = time.AfterFunc(a.wait, func() { send(self, idleTick{gen: gen}) })
}
