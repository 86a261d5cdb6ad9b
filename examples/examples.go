// Package examples is the platform half of the agent search path: the agents and skills the
// repository ships, embedded so a built binary carries them. From a clone the app reads
// the same files from disk (<repo>/examples) instead, so an edit shows without a rebuild.
// Nothing ever writes here: an owner changes an example by putting a file with the same id
// in their own directory, which replaces it whole.
package examples

import "embed"

// FS holds agents/ (agent files, and private skills in agents/<id>/skills/) and skills/
// (shared skills) at its root, as package buddi/agents reads them.
//
//go:embed agents skills
var FS embed.FS
