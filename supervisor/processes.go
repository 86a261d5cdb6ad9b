package supervisor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"buddi/actors"
)

// Proc is a long-lived process the host supervises: spawn.Process is one.
type Proc interface {
	// Done is closed once the process has exited.
	Done() <-chan struct{}
	// Stop ends the process (and its group), waiting up to grace before killing it.
	Stop(grace time.Duration) error
}

// StopGrace is how long a process gets between the polite stop and the kill.
const StopGrace = 5 * time.Second

// ProcessHost runs long-lived processes as actors: one supervisor per workspace under
// "workspaces", one actor per process under it. Stopping an actor stops its process, so a
// workspace's stop, and buddi's (the tree stops leaves first), leave no process behind.
type ProcessHost struct {
	sys  *actors.System
	tree *Tree

	mu         sync.Mutex
	workspaces map[string]*actors.Ref            // by workspace key
	procs      map[string]map[string]*actors.Ref // workspace key → name → actor
}

// NewProcessHost returns a host over the tree's workspaces supervisor.
func NewProcessHost(sys *actors.System, tree *Tree) *ProcessHost {
	return &ProcessHost{sys: sys, tree: tree, workspaces: map[string]*actors.Ref{}, procs: map[string]map[string]*actors.Ref{}}
}

// WorkspaceStrategy is each workspace supervisor's: a process actor that fails is not
// restarted blindly (the process is the agent's to start again), so the budget only guards
// the supervisor itself.
var WorkspaceStrategy = actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 3, Within: time.Minute}}

// Adopt puts p under an actor named name in workspace's subtree; the actor stops p when it
// stops, and leaves the tree when p exits.
func (h *ProcessHost) Adopt(ctx context.Context, workspace, name string, p Proc) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	ws, ok := h.workspaces[workspace]
	if !ok {
		var err error
		if ws, err = h.sys.NewSupervisor(h.tree.Workspaces, workspace, WorkspaceStrategy); err != nil {
			return fmt.Errorf("process host: workspace %s: %w", workspace, err)
		}
		h.workspaces[workspace], h.procs[workspace] = ws, map[string]*actors.Ref{}
	}
	if _, taken := h.procs[workspace][name]; taken {
		return fmt.Errorf("process host: %s already runs in %s", name, workspace)
	}
	ref, err := h.sys.Spawn(ws, name, func() actors.Actor { return &processActor{p: p} })
	if err != nil {
		return fmt.Errorf("process host: %s in %s: %w", name, workspace, err)
	}
	h.procs[workspace][name] = ref
	go func() { // the process exited by itself: its actor leaves the tree
		<-p.Done()
		stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = h.forget(stopCtx, workspace, name, ref)
	}()
	return nil
}

// Stop stops the process name of workspace.
func (h *ProcessHost) Stop(ctx context.Context, workspace, name string) error {
	h.mu.Lock()
	ref, ok := h.procs[workspace][name]
	h.mu.Unlock()
	if !ok {
		return fmt.Errorf("process host: no process %s in %s: %w", name, workspace, ErrNoProcess)
	}
	return h.forget(ctx, workspace, name, ref)
}

// ErrNoProcess means no such process runs.
var ErrNoProcess = errors.New("supervisor: no such process")

func (h *ProcessHost) forget(ctx context.Context, workspace, name string, ref *actors.Ref) error {
	h.mu.Lock()
	if cur, ok := h.procs[workspace][name]; !ok || cur != ref {
		h.mu.Unlock()
		return nil
	}
	delete(h.procs[workspace], name)
	h.mu.Unlock()
	return h.sys.Stop(ctx, ref)
}

// StopAll stops every process of workspace and its supervisor (the workspace changed, or its
// agent was removed).
func (h *ProcessHost) StopAll(ctx context.Context, workspace string) error {
	h.mu.Lock()
	ws, ok := h.workspaces[workspace]
	delete(h.workspaces, workspace)
	delete(h.procs, workspace)
	h.mu.Unlock()
	if !ok {
		return nil
	}
	return h.sys.Stop(ctx, ws)
}

// Running lists the names of workspace's processes.
func (h *ProcessHost) Running(workspace string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for name := range h.procs[workspace] {
		out = append(out, name)
	}
	return out
}

// processActor owns one process: stopping the actor stops the process.
type processActor struct {
	p Proc
}

func (a *processActor) Receive(c *actors.Context) {
	switch c.Message().(type) {
	case actors.Stopping:
		select {
		case <-a.p.Done():
		default:
			if err := a.p.Stop(StopGrace); err != nil {
				c.Log().Warn("process did not stop cleanly", "err", err)
			}
		}
	}
}
