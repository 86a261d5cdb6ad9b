package gateway

import (
	"context"
	"errors"
	"os"
	"sync/atomic"

	"buddi/agents"
	"buddi/core/registry"
	"buddi/examples"
	"buddi/supervisor"
)

// conversationHost hands runs to the supervision tree's conversation host, which exists only
// once the tree is built; River may hand out a run job before that, which then fails and is
// retried by its horizon.
type conversationHost struct {
	h atomic.Pointer[supervisor.ConversationHost]
}

func (c *conversationHost) Run(ctx context.Context, conv, runID string, turn func(ctx context.Context) error) error {
	h := c.h.Load()
	if h == nil {
		return errors.New("buddi is still starting: the run waits for its conversation's actor")
	}
	return h.Run(ctx, conv, runID, turn)
}

// catalogLoader loads the agents on the search path (the shipped examples, then the owner's
// directories) each time it is asked, so an edited agent file applies to the next run, and
// checks every grant against the registry.
func catalogLoader(home string, reg *registry.Registry) func() (*agents.Catalog, error) {
	agentsDir, skillsDir := agents.OwnerDirs(home, os.Getenv)
	return func() (*agents.Catalog, error) {
		return agents.Load(agents.Config{Examples: examples.FS, AgentsDir: agentsDir, SkillsDir: skillsDir,
			KnownTools: func(name string) bool { _, ok := reg.Lookup(name); return ok }})
	}
}
