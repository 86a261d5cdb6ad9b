package runlist

import (
	"path/filepath"
	"slices"
	"strings"
)

// This file is §3's "Remembering an answer", the matching rule only: the list is stored
// and revoked elsewhere, and arrives as Input.Remembered.

// Remembered is one command the owner allowed on a card: "Either exactly this argv, or any
// command that begins the way this one does (the program and its subcommand, npm install
// …)". It is "bound to the agent and the directory (a workspace moved elsewhere starts with
// nothing remembered)".
type Remembered struct {
	// Agent is the agent the owner allowed it for.
	Agent string
	// Workspace is the workspace directory it was allowed in, absolute.
	Workspace string
	// Argv is the remembered argument vector, or its leading words when Prefix is set.
	Argv []string
	// Prefix says any argv that begins with Argv matches; otherwise only Argv exactly.
	Prefix bool
}

// Matches reports whether r allows argv for agent in workspace. It "is matched on the argv
// that will be spawned", so the caller passes only a plain command's argv; Decide does.
// An empty agent, workspace or Argv matches nothing.
func (r Remembered) Matches(agent, workspace string, argv []string) bool {
	if agent == "" || r.Agent != agent || len(r.Argv) == 0 || len(argv) == 0 {
		return false
	}
	if r.Workspace == "" || workspace == "" || filepath.Clean(r.Workspace) != filepath.Clean(workspace) {
		return false
	}
	if r.Prefix {
		return len(argv) >= len(r.Argv) && slices.Equal(argv[:len(r.Argv)], r.Argv)
	}
	return slices.Equal(argv, r.Argv)
}

// PrefixOf returns the words a "begins the way this one does" answer remembers for argv:
// the program and its subcommand, when the second word reads as a subcommand (lower-case
// letters, digits and dashes, starting with a letter). It returns nil when there is none,
// and then only the exact argv can be remembered.
func PrefixOf(argv []string) []string {
	if len(argv) < 2 || strings.ContainsRune(argv[0], '/') {
		return nil
	}
	sub := argv[1]
	if sub == "" || sub[0] < 'a' || sub[0] > 'z' || !matchSet(sub, lowerDigits+"-") {
		return nil
	}
	return []string{argv[0], sub}
}
