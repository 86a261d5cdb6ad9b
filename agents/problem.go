package agents

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with one agent or skill file.
type Problem struct {
	// Path is the file (or directory) the problem is in, as the owner would open it.
	Path string `json:"path"`
	// Message is one plain sentence saying what is wrong and, where it can, what to write.
	Message string `json:"message"`
}

// Error returns "path: message".
func (p Problem) Error() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// LoadError is a load that failed: every problem found in every file, in path order, so the
// owner can fix them all at once. A catalogue with any problem does not load.
type LoadError struct {
	Problems []Problem `json:"problems"` // every problem found, in path order
}

// Error lists every problem, one a line.
func (e *LoadError) Error() string {
	switch len(e.Problems) {
	case 0:
		return "agents: the catalogue did not load"
	case 1:
		return "agents: " + e.Problems[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "agents: %d problems in the agent and skill files:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n")
		b.WriteString(p.Error())
	}
	return b.String()
}

// RoleUnclaimedError is the typed problem [Catalog.ForRole] returns when no agent claims a
// role. It is a configuration state, not a fault: a surface says it in one sentence.
type RoleUnclaimedError struct {
	// Role is the role that was asked for.
	Role string `json:"role"`
}

// Error says which role nobody holds and the frontmatter line that would fix it.
func (e *RoleUnclaimedError) Error() string {
	return fmt.Sprintf("no agent claims the role %s; add %q to one agent's frontmatter (or add %s to its roles: list)", e.Role, e.FixLine(), e.Role)
}

// FixLine is the frontmatter line that would give an agent the role.
func (e *RoleUnclaimedError) FixLine() string { return "roles: [" + e.Role + "]" }

// NoDefaultError is the typed problem [Catalog.Default] returns when no agent is the default.
type NoDefaultError struct{}

// Error says that no agent is the default and the frontmatter line that would fix it.
func (e *NoDefaultError) Error() string {
	return fmt.Sprintf("no agent is the default; add %q to one agent's frontmatter", e.FixLine())
}

// FixLine is the frontmatter line that makes an agent the default.
func (e *NoDefaultError) FixLine() string { return "default: true" }

// problems collects problems while loading.
type problems []Problem

func (ps *problems) add(path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}
