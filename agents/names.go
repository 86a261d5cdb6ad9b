package agents

import (
	"regexp"
	"strings"
)

// The shapes the catalogue validates. It checks shape, never meaning: a role is any kebab
// string, and a tool name is checked against the registry only when [Config.KnownTools] is set.
var (
	// idShape is an agent id: kebab case, starting with a letter.
	idShape = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	// handleShape is a handle with its @: letters and digits, joined by single '-' or '_'.
	handleShape = regexp.MustCompile(`^@[a-z][a-z0-9]*([_-][a-z0-9]+)*$`)
	// roleShape is a role: kebab case, as the seed says.
	roleShape = idShape
	// skillShape is a skill's name, which is its file name without .md.
	skillShape = regexp.MustCompile(`^[a-z0-9][a-z0-9]*([_-][a-z0-9]+)*$`)
	// toolShape is "<plugin>.<verb>", the registry's own rule for tool names.
	toolShape = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}\.[a-z][a-z0-9_]{0,31}$`)
)

// maxNameLen bounds ids, handles, roles and skill names.
const maxNameLen = 64

func validID(s string) bool     { return len(s) <= maxNameLen && idShape.MatchString(s) }
func validHandle(s string) bool { return len(s) <= maxNameLen && handleShape.MatchString(s) }
func validRole(s string) bool   { return len(s) <= maxNameLen && roleShape.MatchString(s) }
func validSkill(s string) bool  { return len(s) <= maxNameLen && skillShape.MatchString(s) }
func validTool(s string) bool   { return toolShape.MatchString(s) }

// NormalizeHandle returns a handle in the catalogue's form: trimmed, lower case, with its
// leading @ (added when missing). It does not say whether the result is a valid handle.
func NormalizeHandle(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if h != "" && !strings.HasPrefix(h, "@") {
		h = "@" + h
	}
	return h
}
