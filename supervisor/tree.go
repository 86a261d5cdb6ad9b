// Package supervisor is buddi's supervision tree: which actors run under which supervisor,
// with what restart strategy and budget, and the actors that own the process's long-lived
// parts (the embedded database, the queue, the dashboard listener).
//
//	root           one-for-one, 3 restarts in 1m, then stop and escalate (buddi exits)
//	├── postgres   the embedded cluster's process (absent with DATABASE_URL)
//	├── queue      the River client and its workers
//	├── surfaces   one-for-one, 5 restarts in 1m
//	│   └── dashboard
//	├── conversations  one-for-one, 10 restarts in 1m (one actor per open conversation)
//	├── workspaces     one-for-one, 5 restarts in 1m (one actor per developer workspace)
//	└── sentinels      one-for-one, 5 restarts in 10m (one actor per sentinel)
package supervisor

import (
	"context"
	"fmt"
	"time"

	"buddi/actors"
)

// Strategies are the tree's stated restart strategies and budgets.
var (
	RootStrategy          = actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 3, Within: time.Minute}}
	SurfacesStrategy      = actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 5, Within: time.Minute}}
	ConversationsStrategy = actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 10, Within: time.Minute}}
	WorkspacesStrategy    = actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 5, Within: time.Minute}}
	SentinelsStrategy     = actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 5, Within: 10 * time.Minute}}
)

// Parts are the workers the tree starts with; a nil part is left out.
type Parts struct {
	// Postgres produces root/postgres, the actor that watches the embedded cluster's server
	// process; nil with DATABASE_URL.
	Postgres func() actors.Actor
	// Queue produces root/queue, the actor that owns the River client.
	Queue func() actors.Actor
	// Dashboard produces root/surfaces/dashboard, the actor that owns the dashboard's listener
	// and HTTP server.
	Dashboard func() actors.Actor
	// Preview produces root/surfaces/preview, the actor that owns the previews' listener and
	// proxy.
	Preview func() actors.Actor
}

// Tree holds the supervisors, for later spawns under them.
type Tree struct {
	// Root is the root supervisor; the others are the subtree supervisors under it
	// (root/surfaces, root/conversations, root/workspaces, root/sentinels).
	Root, Surfaces, Conversations, Workspaces, Sentinels *actors.Ref
	// Queue is the queue actor, nil when Parts.Queue was.
	Queue *actors.Ref
}

// Build starts the tree on sys: the root, then the database, the queue, and the subtrees, in
// that order, so each part finds what it depends on already running.
func Build(sys *actors.System, parts Parts) (*Tree, error) {
	t := &Tree{}
	var err error
	if t.Root, err = sys.NewSupervisor(nil, "root", RootStrategy); err != nil {
		return nil, fmt.Errorf("supervision tree: %w", err)
	}
	if parts.Postgres != nil {
		if _, err := sys.Spawn(t.Root, "postgres", parts.Postgres); err != nil {
			return nil, fmt.Errorf("supervision tree: %w", err)
		}
	}
	if parts.Queue != nil {
		if t.Queue, err = sys.Spawn(t.Root, "queue", parts.Queue); err != nil {
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
	if parts.Dashboard != nil {
		if _, err := sys.Spawn(t.Surfaces, "dashboard", parts.Dashboard); err != nil {
			return nil, fmt.Errorf("supervision tree: %w", err)
		}
	}
	if parts.Preview != nil {
		if _, err := sys.Spawn(t.Surfaces, "preview", parts.Preview); err != nil {
			return nil, fmt.Errorf("supervision tree: %w", err)
		}
	}
	return t, nil
}

// AwaitQueue returns once the queue actor has started River, so buddi reports itself ready
// only when it works jobs.
func (t *Tree) AwaitQueue(ctx context.Context, sys *actors.System) error {
	if t.Queue == nil {
		return nil
	}
	if _, err := sys.Request(ctx, t.Queue, queueStarted{}); err != nil {
		return fmt.Errorf("wait for the queue to start: %w", err)
	}
	return nil
}
