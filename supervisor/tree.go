// Package supervisor is buddi's supervision tree: which actors run under which supervisor,
// with what restart strategy and budget, and the actors that own the process's long-lived
// parts (the embedded database, the queue, the surfaces' listeners). Every node of the tree is
// built here, by Build and Tree.Start, in an order that leaves no window in which one part
// calls another that does not exist yet: the queue, which hands out work, starts last.
//
//	root             one-for-one, 3 restarts in 1m with backoff, then stop and escalate (buddi exits)
//	├── postgres     the embedded cluster's process (absent with DATABASE_URL)
//	├── surfaces     one-for-one, 5 restarts in 1m
//	│   ├── dashboard    the dashboard's listener and server
//	│   ├── preview      the previews' listener and proxy
//	│   ├── telegram     the bot's long poll (with a bot token)
//	│   └── tailnet      the tailnet node's listeners (with the tailnet on)
//	├── conversations    one-for-one, contained: one supervising actor per open conversation
//	│   └── <conversation>   its mailbox; its runs are its children (RunStrategy)
//	│       └── <run>.<n>    the agent loop of one turn
//	├── workspaces   one-for-one: one supervisor per developer workspace
//	│   └── <workspace>      its long-lived processes
//	├── agents       the watch on the owner's agent files
//	├── sentinels    one-for-one, 5 restarts in 10m: one actor per sentinel
//	├── sources      one-for-one, 5 restarts in 10m, contained: one actor per source (with any)
//	└── queue        the River client and its workers (started last)
package supervisor

import (
	"context"
	"fmt"
	"sync"
	"time"

	"buddi/actors"
)

// Strategies are the tree's stated restart strategies and budgets.
var (
	RootStrategy     = actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 3, Within: time.Minute, Backoff: 250 * time.Millisecond}}
	SurfacesStrategy = actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 5, Within: time.Minute, Backoff: 250 * time.Millisecond}}
	// ConversationsStrategy contains a conversation that keeps failing: it is stopped, and its
	// next message builds it again; one conversation never takes buddi down.
	ConversationsStrategy = actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 10, Within: time.Minute}, Contain: true}
	WorkspacesStrategy    = actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 5, Within: time.Minute}}
	SentinelsStrategy     = actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 5, Within: 10 * time.Minute, Backoff: time.Second}}
	// SourcesStrategy contains a source whose poll keeps panicking: it stops, and buddi goes on.
	SourcesStrategy = actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 5, Within: 10 * time.Minute, Backoff: time.Second}, Contain: true}
)

// Parts are what Build starts with; a nil part is left out.
type Parts struct {
	// Postgres produces root/postgres, the actor that watches the embedded cluster's server
	// process; nil with DATABASE_URL.
	Postgres func() actors.Actor
}

// Services are the workers Tree.Start adds once everything they call is wired; a nil one is
// left out.
type Services struct {
	// Dashboard produces root/surfaces/dashboard: the dashboard's listener and server.
	Dashboard func() actors.Actor
	// Preview produces root/surfaces/preview: the previews' listener and proxy.
	Preview func() actors.Actor
	// Telegram produces root/surfaces/telegram: the bot's long poll.
	Telegram func() actors.Actor
	// Tailnet produces root/surfaces/tailnet: the listeners on the tailnet node.
	Tailnet func() actors.Actor
	// Sentinels are root/sentinels' children, one per sentinel.
	Sentinels []actors.Child
	// Sources are root/sources' children, one per source; with none, root/sources is left out.
	Sources []actors.Child
	// Agents produces root/agents: the watch on the owner's agent files.
	Agents func() actors.Actor
	// Queue produces root/queue, the actor that owns the River client: started last, so no
	// job is handed out before the actors it reaches exist.
	Queue func() actors.Actor
	// QueueState is what Queue reports its River client's state to (see Queue).
	QueueState *QueueState
}

// Tree holds the supervisors and hosts, for later spawns under them.
type Tree struct {
	sys *actors.System
	// Root is the root supervisor; the others are the subtree supervisors under it
	// (root/surfaces, root/conversations, root/workspaces, root/sentinels).
	Root, Surfaces, Conversations, Workspaces, Sentinels *actors.Ref
	// Sources is root/sources, nil until Start has started a source.
	Sources *actors.Ref
	// Queue is the queue actor, nil until Start has started one.
	Queue *actors.Ref
	// Turns delivers each conversation's turns to its actor.
	Turns *ConversationHost

	queue *QueueState
}

// Build starts the tree on sys: the root, the database's actor, the subtrees, and the
// conversation host, in that order. The workers that serve come with Start.
func Build(sys *actors.System, parts Parts) (*Tree, error) {
	t := &Tree{sys: sys}
	var err error
	if t.Root, err = sys.NewSupervisor(nil, "root", RootStrategy); err != nil {
		return nil, fmt.Errorf("supervision tree: %w", err)
	}
	if parts.Postgres != nil {
		if _, err := sys.Spawn(t.Root, "postgres", parts.Postgres); err != nil {
			return nil, fmt.Errorf("supervision tree: %w", err)
		}
	}
	subtrees := []struct {
		ref      **actors.Ref
		name     string
		strategy actors.Strategy
	}{
		{&t.Surfaces, "surfaces", SurfacesStrategy},
		{&t.Conversations, "conversations", ConversationsStrategy},
		{&t.Workspaces, "workspaces", WorkspacesStrategy},
		{&t.Sentinels, "sentinels", SentinelsStrategy},
	}
	for _, st := range subtrees {
		if *st.ref, err = sys.NewSupervisor(t.Root, st.name, st.strategy); err != nil {
			return nil, fmt.Errorf("supervision tree: %w", err)
		}
	}
	t.Turns = NewConversationHost(sys, t)
	return t, nil
}

// Start adds the serving workers: the surfaces, the sentinels, the sources and, last, the queue.
func (t *Tree) Start(s Services) error {
	surfaces := []struct {
		name    string
		produce func() actors.Actor
	}{{"dashboard", s.Dashboard}, {"preview", s.Preview}, {"telegram", s.Telegram}, {"tailnet", s.Tailnet}}
	for _, sf := range surfaces {
		if sf.produce == nil {
			continue
		}
		if _, err := t.sys.Spawn(t.Surfaces, sf.name, sf.produce); err != nil {
			return fmt.Errorf("supervision tree: %w", err)
		}
	}
	if s.Agents != nil {
		if _, err := t.sys.Spawn(t.Root, "agents", s.Agents); err != nil {
			return fmt.Errorf("supervision tree: %w", err)
		}
	}
	for _, c := range s.Sentinels {
		if _, err := t.sys.Spawn(t.Sentinels, c.Name, c.Produce); err != nil {
			return fmt.Errorf("supervision tree: sentinel %s: %w", c.Name, err)
		}
	}
	if len(s.Sources) > 0 {
		var err error
		if t.Sources, err = t.sys.NewSupervisor(t.Root, "sources", SourcesStrategy); err != nil {
			return fmt.Errorf("supervision tree: %w", err)
		}
		for _, c := range s.Sources {
			if _, err := t.sys.Spawn(t.Sources, c.Name, c.Produce); err != nil {
				return fmt.Errorf("supervision tree: source %s: %w", c.Name, err)
			}
		}
	}
	if s.Queue != nil {
		t.queue = s.QueueState
		var err error
		if t.Queue, err = t.sys.Spawn(t.Root, "queue", s.Queue); err != nil {
			return fmt.Errorf("supervision tree: %w", err)
		}
	}
	return nil
}

// AwaitQueue returns once the queue actor has started River, so buddi reports itself ready
// only when it works jobs.
func (t *Tree) AwaitQueue(ctx context.Context) error {
	if t.queue == nil {
		return nil
	}
	select {
	case <-t.queue.started():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the queue to start: %w", context.Cause(ctx))
	}
}

// QueueState says whether the queue actor has River running.
type QueueState struct {
	mu      sync.Mutex
	running bool
	first   chan struct{} // closed at the first start
}

// Running reports whether River is fetching and working jobs.
func (s *QueueState) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

func (s *QueueState) set(running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = running
	if running {
		s.startedLocked()
		select {
		case <-s.first:
		default:
			close(s.first)
		}
	}
}

func (s *QueueState) started() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startedLocked()
}

func (s *QueueState) startedLocked() chan struct{} {
	if s.first == nil {
		s.first = make(chan struct{})
	}
	return s.first
}
