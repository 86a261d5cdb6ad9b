package agents

import (
	"fmt"
	"strings"
)

// skillKeys are the frontmatter keys a skill file takes. tools and tier are refused with
// their own sentence; any other key fails the load too.
var skillKeys = []string{"name", "description", "agents"}

// Skill is knowledge or a procedure in markdown, loaded into an agent's prompt. It never
// grants a tool or lowers a tier.
type Skill struct {
	// Name is the file name without .md; a name: key, if given, must say the same.
	Name string `json:"name"`
	// Description is one line on what the skill is for (key description), optional.
	Description string `json:"description,omitempty"`
	// Source is the half of the search path the file came from.
	Source Source `json:"source"`
	// Agent is the id of the agent a private skill (agents/<id>/skills/*.md) belongs to;
	// empty for a shared skill (skills/*.md).
	Agent string `json:"agent,omitempty"`
	// Everyone reports whether a shared skill loads for every agent: it has no agents: key.
	Everyone bool `json:"everyone"`
	// Agents are a shared skill's agents: list, ids or handles as written. An agent not on it
	// still gets the skill by naming it in its own skills: list.
	Agents []string `json:"agents,omitempty"`
	// Path is the file, as the owner would open it.
	Path string `json:"path"`
	// Body is the markdown after the frontmatter.
	Body string `json:"body"`
}

// parseSkill reads one skill file named stem (its file name without .md). privateFor is the
// owning agent's id for a private skill, empty for a shared one. Every problem is added to
// ps; ok is false when there was any.
func parseSkill(path, stem string, data []byte, source Source, privateFor string, ps *problems) (s Skill, ok bool) {
	before := len(*ps)
	s = Skill{Name: stem, Source: source, Agent: privateFor, Path: path, Everyone: privateFor == ""}
	if !validSkill(stem) {
		ps.add(path, "%q is not a valid skill name; rename the file in lower case with hyphens, like house-rules.md", stem+".md")
	}
	fm, msg := splitFrontmatter(data)
	if msg != "" {
		ps.add(path, "%s", msg)
		return Skill{}, false
	}
	s.Body = fm.body
	for _, f := range fm.fields {
		var msg string
		switch f.key {
		case "tools", "tier":
			msg = fmt.Sprintf("a skill file may not have a %s key (line %d): a skill is knowledge and never grants a tool or sets a tier; grant tools in an agent's own tools: list", f.key, f.line)
		case "name":
			var name string
			name, msg = f.stringValue()
			if msg == "" && name != "" && name != stem {
				msg = fmt.Sprintf("name %q on line %d does not match the file name; a skill's name is its file name, so rename the file to %s.md or set name: %s", name, f.line, name, stem)
			}
		case "description":
			s.Description, msg = f.stringValue()
		case "agents":
			if privateFor != "" {
				msg = fmt.Sprintf("a private skill may not have an agents: key (line %d): it loads only for %s, whose directory it is in; move it to the shared skills to give it to others", f.line, privateFor)
				break
			}
			var list []string
			list, msg = f.listValue("concierge, @dev")
			for _, a := range list {
				if msg != "" {
					break
				}
				if !validID(a) && !validHandle(a) {
					msg = fmt.Sprintf("agents on line %d: %q is neither an agent id nor a handle", f.line, a)
				}
			}
			if msg == "" {
				s.Everyone = false
				s.Agents = list
				if s.Agents == nil {
					s.Agents = []string{}
				}
			}
		default:
			msg = fmt.Sprintf("the frontmatter key %q on line %d is not one a skill file takes; remove it or correct its spelling (the keys are %s)", f.key, f.line, strings.Join(skillKeys, ", "))
		}
		if msg != "" {
			ps.add(path, "%s", msg)
		}
	}
	if s.Body == "" {
		ps.add(path, "the skill has no text; write it below the frontmatter")
	}
	return s, len(*ps) == before
}

// loadsFor reports whether a shared skill loads for agent a without a's naming it.
func (s Skill) loadsFor(a Agent) bool {
	if s.Everyone {
		return true
	}
	for _, who := range s.Agents {
		if who == a.ID || (strings.HasPrefix(who, "@") && NormalizeHandle(who) == a.Handle) {
			return true
		}
	}
	return false
}
