package gateway

import (
	"os"

	"buddi/agents"
	"buddi/core/registry"
	"buddi/examples"
)

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
