package executor

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"buddi/core/registry"
	"buddi/plugins"
)

// errAbandoned refuses a dispatch reported after the executor took the call's outcome (its
// deadline passed or its run stopped first): the effect must not begin then.
var errAbandoned = errors.New("executor: the call was abandoned before its effect began, so it must not begin now")

// errDispatchedElsewhere refuses the dispatch of an action another execution dispatched.
var errDispatchedElsewhere = errors.New("executor: another execution has dispatched this action")

// gate records one call's dispatch in the effect ledger, once, before its effect begins, and
// never after the executor has taken the outcome.
type gate struct {
	// record writes the attempt and commits it; first is false when another execution's
	// attempt is there already.
	record func(ctx context.Context) (id int64, first bool, err error)

	mu     sync.Mutex
	closed bool
	id     int64 // the attempt, once recorded
	lost   bool  // another execution recorded its dispatch first
}

// dispatch records the dispatch, or refuses it: after close, or when another execution won.
func (g *gate) dispatch(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.closed:
		return errAbandoned
	case g.lost:
		return errDispatchedElsewhere
	case g.id != 0:
		return nil
	}
	id, first, err := g.record(ctx)
	if err != nil {
		return fmt.Errorf("record the dispatch before the effect begins: %w", err)
	}
	if !first {
		g.lost = true
		return errDispatchedElsewhere
	}
	g.id = id
	return nil
}

// close refuses every later dispatch and returns the attempt recorded (0 when the effect
// never began) and whether another execution dispatched instead. It waits for a dispatch
// being recorded.
func (g *gate) close() (id int64, lost bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	return g.id, g.lost
}

// reportsDispatch reports whether the tool says itself when its effect begins.
func (e *Executor) reportsDispatch(name string) bool {
	tool, ok := e.reg.Lookup(name)
	if !ok {
		return false
	}
	r, ok := tool.(plugins.DispatchReporter)
	return ok && r.ReportsDispatch()
}

// dispatched is how a call went through the gate.
type dispatched struct {
	out     registry.Outcome
	attempt int64 // the ledger's attempt; 0 when the effect never began
	lost    bool  // another execution dispatched the action; nothing ran here
}

// execute runs call with its dispatch recorded through g. A tool that reports its dispatch
// records it itself, when its effect begins; for any other the dispatch is recorded now,
// before Execute. A call abandoned before its effect began (its deadline passed or its run
// stopped) cannot begin after that, so it ends as failed, not unknown. The error is a
// failure to record the dispatch of a tool that does not report it: nothing ran.
func (e *Executor) execute(ctx context.Context, g *gate, call plugins.Call, approved *plugins.Envelope) (dispatched, error) {
	if e.reportsDispatch(call.Tool) {
		ctx = plugins.WithDispatch(ctx, g.dispatch)
	} else if err := g.dispatch(ctx); err != nil {
		_, lost := g.close()
		if lost {
			return dispatched{lost: true}, nil
		}
		return dispatched{}, err
	}
	out := e.run(ctx, call, approved)
	attempt, lost := g.close()
	if attempt == 0 && out.Status == registry.StatusUnknown {
		out = registry.Outcome{
			Result: plugins.Result{Text: fmt.Sprintf("%s was stopped before it began, so nothing was done: %s", call.Tool, notBegunWhy(ctx)), IsError: true},
			Status: registry.StatusFailed,
			Err:    fmt.Errorf("%s abandoned before its effect began: %w", call.Tool, out.Err),
		}
	}
	return dispatched{out: out, attempt: attempt, lost: lost}, nil
}

// notBegunWhy says why a call was abandoned before its effect began.
func notBegunWhy(ctx context.Context) string {
	if ctx.Err() != nil {
		return "its run was stopped"
	}
	return "it did not begin within its time limit"
}
