package actors

import (
	"errors"
	"fmt"
	"time"
)

// spawnTimeout bounds how long Spawn and NewSupervisor wait for the parent.
const spawnTimeout = 5 * time.Second

// reserved names are taken by protoactor's own top-level processes.
var reserved = map[string]bool{"deadletter": true, "eventstream": true}

// NewSupervisor starts a supervisor with strategy under parent, or at the top
// level when parent is nil. Under a parent it goes through a message to the
// parent, which spawns it in its own context and answers.
func (s *System) NewSupervisor(parent *Ref, name string, strategy Strategy) (*Ref, error) {
	if err := strategy.validate(); err != nil {
		return nil, fmt.Errorf("actors: new supervisor %q: %w", name, err)
	}
	sp := spec{name: name, supervisor: true, strategy: strategy}
	if parent == nil {
		return s.spawnTop(sp)
	}
	return s.spawnUnder(parent, sp)
}

// Spawn starts a worker under the parent supervisor; produce builds a new
// Actor for the first start and for every restart. It goes through a message
// to the parent, which spawns the worker in its own context, so that the
// parent's strategy applies, and answers.
func (s *System) Spawn(parent *Ref, name string, produce func() Actor) (*Ref, error) {
	if produce == nil {
		return nil, fmt.Errorf("actors: spawn %q: nil producer", name)
	}
	if parent == nil {
		return nil, fmt.Errorf("actors: spawn %q: a worker needs a parent supervisor", name)
	}
	return s.spawnUnder(parent, spec{name: name, produce: produce})
}

// SpawnSupervisor starts a supervising actor under parent: a worker whose
// behaviour produce builds, and which is also, by strategy, the supervisor of
// the children it spawns from its Receive (Context.Spawn). A conversation is
// one: it takes its messages one at a time and its runs are its children.
func (s *System) SpawnSupervisor(parent *Ref, name string, strategy Strategy, produce func() Actor) (*Ref, error) {
	if err := strategy.validate(); err != nil {
		return nil, fmt.Errorf("actors: spawn supervisor %q: %w", name, err)
	}
	if produce == nil {
		return nil, fmt.Errorf("actors: spawn supervisor %q: nil producer", name)
	}
	if parent == nil {
		return nil, fmt.Errorf("actors: spawn supervisor %q: it needs a parent supervisor", name)
	}
	return s.spawnUnder(parent, spec{name: name, supervisor: true, strategy: strategy, produce: produce})
}

func (s *System) spawnTop(sp spec) (*Ref, error) {
	if err := checkName(sp.name); err != nil {
		return nil, err
	}
	if reserved[sp.name] {
		return nil, fmt.Errorf("actors: name %q is reserved by protoactor", sp.name)
	}
	s.mu.Lock()
	n, gen, err := s.claimLocked(nil, sp)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	pid, err := s.as.Root.SpawnNamed(s.props(n, gen), sp.name)
	if err := s.commit(n, gen, pid, err, true); err != nil {
		return nil, err
	}
	return &Ref{pid: pid, path: n.path}, nil
}

func (s *System) spawnUnder(parent *Ref, sp spec) (*Ref, error) {
	path := parent.path + "/" + sp.name
	if err := checkName(sp.name); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("actors: spawn %s: %w", path, ErrShutdown)
	}
	p := s.nodes[parent.path]
	if p == nil || !p.alive {
		s.mu.Unlock()
		return nil, fmt.Errorf("actors: spawn %s: parent %s: %w", path, parent.path, ErrNotRunning)
	}
	if !p.supervisor {
		s.mu.Unlock()
		return nil, fmt.Errorf("actors: spawn %s: parent %s is a worker, not a supervisor", path, parent.path)
	}
	done := p.done
	s.mu.Unlock()

	req := &spawnRequest{spec: sp, ch: make(chan spawnReply, 1)}
	s.as.Root.Send(parent.pid, req)
	timer := time.NewTimer(spawnTimeout)
	defer timer.Stop()
	select {
	case r := <-req.ch:
		return r.ref, r.err
	case <-done:
		select {
		case r := <-req.ch:
			return r.ref, r.err
		default:
			return nil, fmt.Errorf("actors: spawn %s: parent %s: %w", path, parent.path, ErrNotRunning)
		}
	case <-timer.C:
		return nil, fmt.Errorf("actors: spawn %s: parent did not answer within %s", path, spawnTimeout)
	}
}

// checkName accepts letters, digits, '.', '_' and '-'. protoactor's generated
// names contain '$' and paths are joined with '/', so neither may appear.
func checkName(name string) error {
	if name == "" {
		return errors.New("actors: empty name")
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
		default:
			return fmt.Errorf("actors: name %q: use letters, digits, '.', '_' or '-'", name)
		}
	}
	return nil
}

// Child names a worker and how to produce it, for a caller that hands a list of workers to
// the code that spawns them.
type Child struct {
	// Name is the worker's name among its siblings.
	Name string
	// Produce builds the worker's Actor, at its start and at every restart.
	Produce func() Actor
}
