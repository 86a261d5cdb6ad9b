package app

import (
	"context"
	"log/slog"
	"os"

	"buddi/agents"
	"buddi/core/registry"
	"buddi/examples"
)

// liveCatalog is the agents on the search path (the shipped examples, then the owner's
// directories), parsed once and again whenever a file of the owner's changes, so an edited
// agent file applies to the next run; every grant is checked against the registry.
func liveCatalog(home string, reg *registry.Registry, log *slog.Logger) *agents.Live {
	agentsDir, skillsDir := agents.OwnerDirs(home, os.Getenv)
	return agents.NewLive(agents.Config{Examples: examples.FS, AgentsDir: agentsDir, SkillsDir: skillsDir,
		KnownTools: func(name string) bool { _, ok := reg.Lookup(name); return ok }}, log)
}

// watchAgents is the work of root/agents: it follows the owner's agent files and, at start and
// after every change, calls changed (which stops the processes of an agent whose file is
// gone).
func watchAgents(live *agents.Live, changed func(ctx context.Context)) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		watched := make(chan error, 1)
		go func() { watched <- live.Run(ctx) }()
		changed(ctx)
		for {
			select {
			case <-ctx.Done():
				<-watched
				return nil
			case err := <-watched:
				return err
			case <-live.Changes():
				changed(ctx)
			}
		}
	}
}
