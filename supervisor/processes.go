package supervisor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"buddi/actors"
	"buddi/supervisor/proc"
)

// StopGrace is how long a process gets between the polite stop and the kill.
const StopGrace = 5 * time.Second

// WorkspaceBudget is each workspace's restart budget for its processes: a process that
// crashes is started again after 1 s, then 2 s, then 4 s; a fourth crash within a minute
// stops it for good and the owner is told.
var WorkspaceBudget = actors.Budget{MaxRestarts: 3, Within: time.Minute, Backoff: time.Second}

// recordTimeout bounds one write of the durable copy (Spec.Record).
const recordTimeout = 30 * time.Second

// ProcessDeps are what a ProcessHost needs besides the tree; the zero value works.
type ProcessDeps struct {
	// Budget is each workspace's restart budget for its processes. Zero: WorkspaceBudget.
	Budget actors.Budget
	// Grace is how long a stopped process gets before it is killed. Zero: StopGrace.
	Grace time.Duration
	// Log receives what the host logs. Nil discards.
	Log *slog.Logger
}

// ProcessHost runs long-lived workspace processes as actors: a supervising actor per
// workspace under "workspaces" (one-for-one, the workspace's budget, its processes' spent
// budgets contained), one actor per process under it, built with actors.Go. The actor owns
// its process: its work takes the process over, or starts it again, and returns when it
// exits, so the exit arrives at the actor. A clean exit ends the actor; a crash fails it and
// the workspace restarts it with backoff; past the budget the process is given up and the
// owner told (proc.GaveUp), and nothing escalates past the workspace. Stopping an actor stops
// its process, so a workspace's stop, and buddi's (the tree stops leaves first), leave no
// process behind.
//
// What runs is recorded once in memory: the actors keep the host's record (Lookup, List)
// current as their processes start, crash and end; the plugin's table is the durable copy.
type ProcessHost struct {
	sys        *actors.System
	workspaces *actors.Ref
	strategy   actors.Strategy
	grace      time.Duration
	log        *slog.Logger

	mu    sync.Mutex
	procs map[string]*supervised // by process name (unique across the installation)

	changes chan struct{} // one pending signal after the record changed
}

// supervised is the host's record of one process, kept by its actor.
type supervised struct {
	spec proc.Spec
	rec  *recorder

	// guarded by ProcessHost.mu
	status proc.Status
	first  proc.Proc // the process the first incarnation takes over; nil once taken
	starts int       // incarnations that got a process
}

// NewProcessHost returns a host whose workspaces are spawned under the supervisor at
// workspaces (the tree's root/workspaces).
func NewProcessHost(sys *actors.System, workspaces *actors.Ref, deps ProcessDeps) *ProcessHost {
	budget := deps.Budget
	if budget == (actors.Budget{}) {
		budget = WorkspaceBudget
	}
	grace := deps.Grace
	if grace <= 0 {
		grace = StopGrace
	}
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &ProcessHost{
		sys: sys, workspaces: workspaces, grace: grace, log: log.With("service", "processes"),
		strategy: actors.Strategy{Kind: actors.OneForOne, Budget: budget, Contain: true},
		procs:    map[string]*supervised{},
		changes:  make(chan struct{}, 1),
	}
}

// Strategy is each workspace's: one-for-one within the budget, a process that spends it
// stopped and given up, nothing escalated.
func (h *ProcessHost) Strategy() actors.Strategy { return h.strategy }

// Adopt puts spec.First under an actor named spec.Name in spec.Workspace's subtree: from now
// on the actor owns it. On an error nothing owns it: the caller stops it.
func (h *ProcessHost) Adopt(ctx context.Context, spec proc.Spec) error {
	if spec.First == nil {
		return fmt.Errorf("process host: %s in %s: no process to adopt", spec.Name, spec.Workspace)
	}
	e := &supervised{spec: spec, first: spec.First, rec: &recorder{log: h.log, record: spec.Record}}
	e.status = proc.Status{Workspace: spec.Workspace, Name: spec.Name, State: proc.StateRunning, Pid: spec.First.Pid(), Port: spec.Port, Since: time.Now()}
	h.mu.Lock()
	if old, taken := h.procs[spec.Name]; taken {
		h.mu.Unlock()
		return fmt.Errorf("process host: a process named %s already runs (in %s): stop it first", spec.Name, old.spec.Workspace)
	}
	h.procs[spec.Name] = e
	h.mu.Unlock()
	h.touch()

	ws, err := h.workspace(spec.Workspace)
	if err == nil {
		_, err = h.sys.Spawn(ws, spec.Name, actors.Go(spec.Workspace+"/"+spec.Name, h.work(e), actors.Finished(h.finished(e))))
	}
	if err != nil {
		h.forget(e)
		return fmt.Errorf("process host: %s in %s: %w", spec.Name, spec.Workspace, err)
	}
	return nil
}

// workspace returns the workspace's supervising actor, spawning it with its first process.
func (h *ProcessHost) workspace(name string) (*actors.Ref, error) {
	if ref := h.sys.Lookup(h.workspaces.Path() + "/" + name); ref != nil {
		return ref, nil
	}
	ref, err := h.sys.SpawnSupervisor(h.workspaces, name, h.strategy, func() actors.Actor { return &workspaceActor{h: h} })
	var taken *actors.NameTakenError
	if errors.As(err, &taken) { // another start made it meanwhile
		if ref := h.sys.Lookup(taken.Path); ref != nil {
			return ref, nil
		}
	}
	return ref, err
}

// work is the process actor's work: take the process over (or start it again), then wait
// for its exit, which it returns, or for the actor's stop, which stops it.
func (h *ProcessHost) work(e *supervised) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		p, err := h.take(ctx, e)
		if err != nil {
			return err
		}
		select {
		case <-p.Done():
			return p.Exit()
		case <-ctx.Done():
			if err := p.Stop(h.grace); err != nil {
				h.log.Warn("a process did not stop cleanly", "workspace", e.spec.Workspace, "name", e.spec.Name, "err", err)
			}
			return ctx.Err()
		}
	}
}

// errNotRestartable ends an incarnation that has no process to take and no way to start one.
var errNotRestartable = errors.New("it cannot be started again by this buddi")

// take hands the incarnation its process: the first one's, or a new one.
func (h *ProcessHost) take(ctx context.Context, e *supervised) (proc.Proc, error) {
	h.mu.Lock()
	p := e.first
	e.first = nil
	h.mu.Unlock()
	if p == nil {
		if e.spec.Start == nil {
			return nil, errNotRestartable
		}
		var err error
		if p, err = e.spec.Start(ctx); err != nil {
			if errors.Is(err, proc.ErrStopped) {
				return nil, err
			}
			return nil, fmt.Errorf("could not be started again: %w", err)
		}
	}
	h.mu.Lock()
	e.starts++
	if e.starts > 1 {
		e.status.Restarts++
	}
	e.status.State, e.status.Pid, e.status.Since = proc.StateRunning, p.Pid(), time.Now()
	h.mu.Unlock()
	h.touch()
	return p, nil
}

// finished takes the exit of the process on the actor's goroutine: a clean end, or a stop
// someone recorded, ends the actor; a crash fails it, for its workspace to restart.
func (h *ProcessHost) finished(e *supervised) func(c *actors.Context, err error) {
	return func(c *actors.Context, err error) {
		switch {
		case errors.Is(err, proc.ErrStopped):
			h.forget(e)
			c.Stop(c.Self())
		case err == nil || e.spec.Start == nil || errors.Is(err, errNotRestartable):
			h.forget(e)
			ev := proc.Event{Kind: proc.Exited, Workspace: e.spec.Workspace, Name: e.spec.Name, Sentence: e.spec.Name + " exited."}
			if err != nil {
				ev.Reason = err.Error()
				ev.Sentence = fmt.Sprintf("%s ended (%s); buddi does not start it again.", e.spec.Name, err)
			}
			e.rec.add(ev)
			c.Stop(c.Self())
		default:
			h.mu.Lock()
			e.status.State, e.status.Pid, e.status.Reason, e.status.Since = proc.StateRestarting, 0, err.Error(), time.Now()
			restarts := e.status.Restarts
			h.mu.Unlock()
			h.touch()
			e.rec.add(proc.Event{Kind: proc.Crashed, Workspace: e.spec.Workspace, Name: e.spec.Name, Reason: err.Error(), Restarts: restarts})
			panic(fmt.Sprintf("%s %s", e.spec.Name, err))
		}
	}
}

// gaveUp takes a process whose crashes spent its workspace's budget: its actor is stopped;
// it leaves the record and the owner is told.
func (h *ProcessHost) gaveUp(path string, restarts int) {
	name := path[strings.LastIndexByte(path, '/')+1:]
	h.mu.Lock()
	e := h.procs[name]
	if e == nil || h.path(e.spec.Workspace, name) != path {
		h.mu.Unlock()
		return
	}
	delete(h.procs, name)
	reason := e.status.Reason
	h.mu.Unlock()
	h.touch()
	within := h.strategy.Budget.Within
	e.rec.add(proc.Event{Kind: proc.GaveUp, Workspace: e.spec.Workspace, Name: name, Reason: reason, Restarts: restarts,
		Sentence: fmt.Sprintf("%s kept crashing (last: %s) and was started again %d %s within %s, so buddi stopped it: read its output with developer.output, fix it and start it again.",
			name, reason, restarts, plural(restarts, "time", "times"), span(within))})
}

// forget drops e from the record, if it is still there.
func (h *ProcessHost) forget(e *supervised) {
	h.mu.Lock()
	gone := h.procs[e.spec.Name] == e
	if gone {
		delete(h.procs, e.spec.Name)
	}
	h.mu.Unlock()
	if gone {
		h.touch()
	}
}

// touch signals Changes.
func (h *ProcessHost) touch() {
	select {
	case h.changes <- struct{}{}:
	default:
	}
}

// Changes signals after the record changed: a process started, crashed, was started again,
// ended or was stopped (at most one signal waits). The tailnet's per-process ports follow it.
func (h *ProcessHost) Changes() <-chan struct{} { return h.changes }

func (h *ProcessHost) path(workspace, name string) string {
	return h.workspaces.Path() + "/" + workspace + "/" + name
}

// Stop stops the process name of workspace and waits for it to have stopped.
func (h *ProcessHost) Stop(ctx context.Context, workspace, name string) error {
	h.mu.Lock()
	e := h.procs[name]
	if e != nil && e.spec.Workspace != workspace {
		e = nil
	}
	h.mu.Unlock()
	ref := h.sys.Lookup(h.path(workspace, name))
	if ref == nil && e == nil {
		return fmt.Errorf("process host: no process %s in %s: %w", name, workspace, proc.ErrNoProcess)
	}
	var err error
	if ref != nil {
		err = h.sys.Stop(ctx, ref)
	}
	if e != nil {
		h.forget(e)
	}
	if err != nil {
		return fmt.Errorf("process host: stop %s in %s: %w", name, workspace, err)
	}
	return nil
}

// StopAll stops every process of workspace and its supervising actor (the workspace
// changed, or its agent was removed).
func (h *ProcessHost) StopAll(ctx context.Context, workspace string) error {
	var err error
	if ref := h.sys.Lookup(h.workspaces.Path() + "/" + workspace); ref != nil {
		err = h.sys.Stop(ctx, ref)
	}
	h.mu.Lock()
	for name, e := range h.procs {
		if e.spec.Workspace == workspace {
			delete(h.procs, name)
		}
	}
	h.mu.Unlock()
	h.touch()
	if err != nil {
		return fmt.Errorf("process host: stop the processes of %s: %w", workspace, err)
	}
	return nil
}

// Lookup returns the supervised process named name as its actor last reported it: what a
// preview asks on every request, answered from memory.
func (h *ProcessHost) Lookup(name string) (proc.Status, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.procs[name]
	if !ok {
		return proc.Status{}, false
	}
	return e.status, true
}

// List returns the supervised processes of workspace, or of every workspace when it is
// empty, by workspace and name.
func (h *ProcessHost) List(workspace string) []proc.Status {
	h.mu.Lock()
	out := make([]proc.Status, 0, len(h.procs))
	for _, e := range h.procs {
		if workspace == "" || e.spec.Workspace == workspace {
			out = append(out, e.status)
		}
	}
	h.mu.Unlock()
	slices.SortFunc(out, func(a, b proc.Status) int {
		return cmp.Or(strings.Compare(a.Workspace, b.Workspace), strings.Compare(a.Name, b.Name))
	})
	return out
}

// workspaceActor is a workspace's supervising actor: it hears of a process given up.
type workspaceActor struct{ h *ProcessHost }

// Receive implements actors.Actor.
func (a *workspaceActor) Receive(c *actors.Context) {
	if m, ok := c.Message().(actors.ChildFailed); ok {
		a.h.gaveUp(m.Path, m.Restarts)
	}
}

// recorder hands one process's events to its Spec.Record in order, on a goroutine that
// lives while there is something to write.
type recorder struct {
	log    *slog.Logger
	record func(ctx context.Context, ev proc.Event)

	mu      sync.Mutex
	queue   []proc.Event
	writing bool
}

func (r *recorder) add(ev proc.Event) {
	if r.record == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queue = append(r.queue, ev)
	if !r.writing {
		r.writing = true
		go r.drain()
	}
}

func (r *recorder) drain() {
	for {
		r.mu.Lock()
		if len(r.queue) == 0 {
			r.writing = false
			r.mu.Unlock()
			return
		}
		ev := r.queue[0]
		r.queue = r.queue[1:]
		r.mu.Unlock()
		r.write(ev)
	}
}

func (r *recorder) write(ev proc.Event) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("recording a process event panicked", "workspace", ev.Workspace, "name", ev.Name, "event", ev.Kind, "panic", p)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	r.record(ctx, ev)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// span renders a budget's window for the owner: "a minute", "10 minutes", "30s".
func span(d time.Duration) string {
	switch {
	case d <= 0:
		return "buddi's run"
	case d == time.Minute:
		return "a minute"
	case d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	default:
		return d.String()
	}
}
