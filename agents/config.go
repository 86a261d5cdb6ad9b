package agents

import (
	"io/fs"
	"path/filepath"
)

// Config says where the two halves of the search path are. The zero value loads nothing and
// gives an empty catalogue.
type Config struct {
	// Examples is the platform half: a file system with agents/ and skills/ at its root. From
	// a clone the app passes os.DirFS("<repo>/examples"); a built binary passes the copy
	// embedded in package buddi/examples. Nil loads no examples.
	Examples fs.FS
	// ExamplesPath is the directory example files are named under in Agent.Path, Skill.Path
	// and problems, like "/home/me/buddi/examples". Default "examples".
	ExamplesPath string
	// AgentsDir is the owner's agents directory: *.md agent files, and private skills in
	// <id>/skills/*.md. Empty means none; a directory that does not exist is an empty half.
	// There is no environment fallback here: [OwnerDirs] gives BUDDI_AGENTS_DIR, else
	// <data>/agents.
	AgentsDir string
	// SkillsDir is the owner's shared skills directory (*.md). Empty means none; a directory
	// that does not exist is an empty half. [OwnerDirs] gives BUDDI_SKILLS_DIR, else
	// <data>/skills.
	SkillsDir string
	// KnownTools, when set, reports whether a tool name is registered; a grant naming any
	// other tool fails the load. Nil skips the check, so the catalogue can load before the
	// registry exists; [Catalog.CheckTools] runs it later.
	KnownTools func(name string) bool

	overlay *Change // set by Try: a change laid over the owner's directories
}

// OwnerDirs returns the owner's half of the search path for a data directory: the agents
// directory is BUDDI_AGENTS_DIR if set, else <data>/agents, and the skills directory is
// BUDDI_SKILLS_DIR if set, else <data>/skills. It reads the environment only through getenv
// (os.Getenv in production), and is the only function in this package that consults it.
func OwnerDirs(dataDir string, getenv func(string) string) (agentsDir, skillsDir string) {
	agentsDir, skillsDir = getenv("BUDDI_AGENTS_DIR"), getenv("BUDDI_SKILLS_DIR")
	if agentsDir == "" {
		agentsDir = filepath.Join(dataDir, "agents")
	}
	if skillsDir == "" {
		skillsDir = filepath.Join(dataDir, "skills")
	}
	return agentsDir, skillsDir
}
