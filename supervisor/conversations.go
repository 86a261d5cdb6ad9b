package supervisor

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"buddi/actors"
)

// ConversationHost runs turns as actors: one supervisor per open conversation under
// "conversations", which serialises its turns, and one run actor per run in flight under it,
// which runs the agent loop. A run's queue job asks the host to run the turn and waits for
// its answer; a cancelled job context (lease lost, shutdown) or the run actor's stop cancels
// the loop. The conversation's supervisor leaves the tree when no turn is waiting.
type ConversationHost struct {
	sys  *actors.System
	tree *Tree

	mu    sync.Mutex
	convs map[string]*openConversation
	gen   uint64 // numbers each conversation supervisor, so a new one never meets the old one's name
}

type openConversation struct {
	stop  context.CancelCauseFunc // stops the turn running now; nil between turns
	run   string                  // the run of the turn running now
	ref   *actors.Ref
	turn  chan struct{} // holds a token while a turn runs: one turn at a time
	users int           // turns running or waiting
}

// ConversationStrategy is each conversation supervisor's: a run actor is not restarted (the
// queue retries the run, by its horizon), so the budget guards the supervisor itself.
var ConversationStrategy = actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 3, Within: time.Minute}}

// NewConversationHost returns a host over the tree's conversations supervisor.
func NewConversationHost(sys *actors.System, tree *Tree) *ConversationHost {
	return &ConversationHost{sys: sys, tree: tree, convs: map[string]*openConversation{}}
}

// Run runs turn as the run actor runID of conversation, after any turn of the conversation
// that came first, and returns its error. A panic in turn is its error.
func (h *ConversationHost) Run(ctx context.Context, conversation, runID string, turn func(ctx context.Context) error) error {
	oc, err := h.open(conversation)
	if err != nil {
		return err
	}
	defer h.release(conversation, oc)
	select {
	case oc.turn <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("wait for the turn before run %s: %w", runID, ctx.Err())
	}
	defer func() { <-oc.turn }()

	runCtx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(context.Canceled) }
	defer cancel()
	h.mu.Lock()
	oc.stop, oc.run = cancelCause, runID
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		oc.stop, oc.run = nil, ""
		h.mu.Unlock()
	}()
	done := make(chan error, 1)
	ref, err := h.sys.Spawn(oc.ref, runID, func() actors.Actor {
		return &runActor{ctx: runCtx, cancel: cancel, turn: turn, done: done}
	})
	if err != nil {
		return fmt.Errorf("start run %s: %w", runID, err)
	}
	err = <-done // the loop honours runCtx: a cancelled job or a stopped actor ends it
	stopCtx, stopCancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer stopCancel()
	_ = h.sys.Stop(stopCtx, ref)
	return err
}

func (h *ConversationHost) open(conversation string) (*openConversation, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	oc, ok := h.convs[conversation]
	if !ok {
		// The supervisor of a conversation that just went idle may still be stopping under
		// its name: each one gets a name of its own.
		h.gen++
		ref, err := h.sys.NewSupervisor(h.tree.Conversations, fmt.Sprintf("%s.%d", conversation, h.gen), ConversationStrategy)
		if err != nil {
			return nil, fmt.Errorf("open conversation %s: %w", conversation, err)
		}
		oc = &openConversation{ref: ref, turn: make(chan struct{}, 1)}
		h.convs[conversation] = oc
	}
	oc.users++
	return oc, nil
}

func (h *ConversationHost) release(conversation string, oc *openConversation) {
	h.mu.Lock()
	oc.users--
	last := oc.users == 0
	if last {
		delete(h.convs, conversation)
	}
	h.mu.Unlock()
	if last {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.sys.Stop(ctx, oc.ref)
	}
}

// Stop stops the turn of run runID when it is the one running in conversation: its context
// is cancelled with cause. It reports false when that run is not running there (it ended, or
// another turn runs now: a Stop pressed as one turn ends never stops the next).
func (h *ConversationHost) Stop(conversation, runID string, cause error) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	oc, ok := h.convs[conversation]
	if !ok || oc.stop == nil || oc.run != runID {
		return false
	}
	oc.stop(cause)
	return true
}

// runActor runs one turn on its own goroutine (Receive never blocks) and cancels it when
// the actor stops.
type runActor struct {
	ctx    context.Context
	cancel context.CancelFunc
	turn   func(ctx context.Context) error
	done   chan error
	once   sync.Once
}

func (a *runActor) Receive(c *actors.Context) {
	switch c.Message().(type) {
	case actors.Started:
		a.once.Do(func() {
			go func() {
				var err error
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("the run panicked: %v\n%s", r, debug.Stack())
					}
					a.done <- err
				}()
				err = a.turn(a.ctx)
			}()
		})
	case actors.Stopping:
		a.cancel()
	}
}
