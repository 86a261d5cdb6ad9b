package actors

import (
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
)

// States of a Node.
const (
	// StateRunning: the actor is up (or being spawned).
	StateRunning = "running"
	// StateRestarting: the actor's supervisor is replacing it.
	StateRestarting = "restarting"
	// StateStopped: the actor has stopped and nothing will restart it unless
	// its parent is itself restarted.
	StateStopped = "stopped"
)

// Node is one actor in a snapshot of the tree.
type Node struct {
	// Path is the actor's path, e.g. "root/surfaces".
	Path string
	// Parent is the parent's path, empty for a top-level supervisor.
	Parent string
	// Supervisor is true for supervisors, false for workers.
	Supervisor bool
	// Strategy describes a supervisor's Strategy; empty for workers.
	Strategy string
	// Restarts counts the restarts of this actor since it was first spawned.
	Restarts int
	// State is StateRunning, StateRestarting or StateStopped.
	State string
}

// Tree returns a snapshot of the tree: parents before children, siblings in
// the order they were spawned.
func (s *System) Tree() []Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Node, 0, len(s.nodes))
	var walk func(n *node)
	walk = func(n *node) {
		nd := Node{Path: n.path, Parent: n.parent, Supervisor: n.supervisor, Restarts: n.restarts, State: n.state}
		if n.supervisor {
			nd.Strategy = n.strategy.String()
		}
		out = append(out, nd)
		for _, c := range n.children {
			walk(c)
		}
	}
	for _, n := range s.tops {
		walk(n)
	}
	return out
}

// spec is what a parent needs to build a child again.
type spec struct {
	name       string
	supervisor bool
	strategy   Strategy
	produce    func() Actor // a worker's behaviour, or a supervising actor's (nil: a plain supervisor)
	transient  bool         // spawned by a supervising actor's Receive: not rebuilt when it restarts
}

// node is the registry's record of one actor. It outlives the actor's
// incarnations: a restart keeps the protoactor process, a rebuild by a
// restarted parent makes a new one (a new gen). All fields are guarded by
// System.mu.
type node struct {
	spec
	path, parent string
	depth        int
	children     []*node

	restarts int
	state    string
	reason   string // why the pending restart happens
	pid      *actor.PID
	gen      uint64
	alive    bool          // the current incarnation has not terminated
	done     chan struct{} // closed when it has
	forgot   bool          // removed by Stop: not to be rebuilt
	pending  []*spawnRequest
}

// claimLocked reserves the child's name under parent (nil: top level) and
// registers it; the caller spawns it and then calls commit.
func (s *System) claimLocked(parent *node, sp spec) (*node, uint64, error) {
	path, parentPath, depth := sp.name, "", 0
	if parent != nil {
		path, parentPath, depth = parent.path+"/"+sp.name, parent.path, parent.depth+1
	}
	if s.closed {
		return nil, 0, fmt.Errorf("actors: spawn %s: %w", path, ErrShutdown)
	}
	if old := s.nodes[path]; old != nil {
		if old.alive {
			return nil, 0, &NameTakenError{Path: path}
		}
		s.removeLocked(old)
	}
	n := &node{spec: sp, path: path, parent: parentPath, depth: depth}
	s.nodes[path] = n
	if parent != nil {
		parent.children = append(parent.children, n)
	} else {
		s.tops = append(s.tops, n)
	}
	s.reviveLocked(n)
	return n, n.gen, nil
}

// reviveLocked starts a new incarnation of n; the caller spawns it and then
// calls commit.
func (s *System) reviveLocked(n *node) {
	s.gen++
	n.gen, n.alive, n.state, n.pid = s.gen, true, StateRunning, nil
	n.done = make(chan struct{})
	s.spawning.Add(1)
}

// commit records the outcome of spawning incarnation gen of n. A fresh node
// that failed to spawn is removed; a rebuilt one is marked stopped.
func (s *System) commit(n *node, gen uint64, pid *actor.PID, err error, fresh bool) error {
	defer s.spawning.Done()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if n.gen == gen {
			s.finishLocked(n)
			if fresh {
				s.removeLocked(n)
			}
		}
		if errors.Is(err, actor.ErrNameExists) {
			return &NameTakenError{Path: n.path}
		}
		return fmt.Errorf("actors: spawn %s: %w", n.path, err)
	}
	if n.gen == gen {
		n.pid = pid
	}
	return nil
}

// finishLocked records that n's current incarnation has terminated.
func (s *System) finishLocked(n *node) {
	n.state = StateStopped
	if !n.alive {
		return
	}
	n.alive = false
	close(n.done)
	for _, req := range n.pending {
		req.answer(nil, fmt.Errorf("actors: spawn under %s: %w", n.path, ErrNotRunning))
	}
	n.pending = nil
	if n.forgot {
		s.removeLocked(n)
	}
}

// removeLocked deletes n and its subtree from the registry.
func (s *System) removeLocked(n *node) {
	var drop func(n *node)
	drop = func(n *node) {
		if s.nodes[n.path] == n {
			delete(s.nodes, n.path)
		}
		for _, c := range n.children {
			drop(c)
		}
	}
	drop(n)
	siblings := &s.tops
	if p := s.nodes[n.parent]; n.parent != "" && p != nil {
		siblings = &p.children
	}
	for i, c := range *siblings {
		if c == n {
			*siblings = append((*siblings)[:i:i], (*siblings)[i+1:]...)
			break
		}
	}
}

// current returns n if gen is still its incarnation.
func (s *System) currentLocked(path string, gen uint64) *node {
	if n := s.nodes[path]; n != nil && n.gen == gen {
		return n
	}
	return nil
}

func (s *System) markStarted(path string, gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.currentLocked(path, gen); n != nil && n.alive {
		n.state = StateRunning
	}
}

// markRestarting counts a restart and returns its reason.
func (s *System) markRestarting(path string, gen uint64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.currentLocked(path, gen)
	if n == nil {
		return ""
	}
	n.state = StateRestarting
	n.restarts++
	reason := n.reason
	n.reason = ""
	return reason
}

// markStopped records an actor's Stopped. A child's incarnation is finished
// when its parent has processed Terminated (childTerminated), so that a new
// sibling of the same name cannot race the old one; a top-level supervisor
// has no parent actor and finishes here.
func (s *System) markStopped(path string, gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.currentLocked(path, gen)
	if n == nil {
		return
	}
	n.state = StateStopped
	if n.parent == "" {
		s.finishLocked(n)
	}
}

// childTerminated runs on the parent's goroutine when it has removed the child.
func (s *System) childTerminated(who *actor.PID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.nodes[who.Id]; n != nil && n.pid == who {
		s.finishLocked(n)
	}
}

func (s *System) setRestartReason(pids []*actor.PID, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pid := range pids {
		if n := s.nodes[pid.Id]; n != nil {
			n.reason = reason
			n.state = StateRestarting // also while it waits out a backoff
		}
	}
}

// forgetAll marks the actors as not to be rebuilt: they leave the tree once
// they have stopped.
func (s *System) forgetAll(pids []*actor.PID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pid := range pids {
		if n := s.nodes[pid.Id]; n != nil {
			n.forgot = true
		}
	}
}

// props builds incarnation gen of n. Top-level supervisors get the system's
// guardian as parent.
func (s *System) props(n *node, gen uint64) *actor.Props {
	path := n.path
	if n.supervisor {
		strategy, inner := n.strategy, n.produce
		produce := func() actor.Actor { return s.newSupervisor(path, gen, strategy, inner) }
		if n.parent == "" {
			return actor.PropsFromProducer(produce, actor.WithGuardian(s.guardian))
		}
		return actor.PropsFromProducer(produce)
	}
	produce := n.produce
	return actor.PropsFromProducer(func() actor.Actor { return s.newWorker(path, gen, produce) })
}

// Lookup returns a Ref to the running actor at path, or nil when none runs
// there.
func (s *System) Lookup(path string) *Ref {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[path]
	if n == nil || !n.alive || n.pid == nil {
		return nil
	}
	return &Ref{pid: n.pid, path: n.path}
}
