package agents

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/text/language"
)

// Source is the half of the search path a file came from.
type Source string

// The two halves of the search path.
const (
	// SourceExample is the platform half: the examples the repository ships.
	SourceExample Source = "example"
	// SourcePrivate is the owner's half: BUDDI_AGENTS_DIR or <data>/agents, and the skills beside it.
	SourcePrivate Source = "private"
)

// Bounds on the frontmatter's numbers.
const (
	// MaxTurnBudget is the largest turn_budget an agent file may declare.
	MaxTurnBudget = 1000
	// MinIdleRollover is the shortest idle_rollover an agent file may declare.
	MinIdleRollover = time.Minute
	// MaxIdleRollover is the longest idle_rollover an agent file may declare.
	MaxIdleRollover = 30 * 24 * time.Hour
	// DefaultIdleRollover is how long a conversation may sit idle before the owner's next
	// message starts a new one (the seed's three hours), for an agent that declares none.
	DefaultIdleRollover = 3 * time.Hour
)

// agentKeys are the frontmatter keys an agent file takes, in the order they are listed to
// the owner. Any other key fails the load.
var agentKeys = []string{"id", "handle", "name", "tools", "roles", "skills", "language", "turn_budget", "idle_rollover", "default"}

// Agent is one agent as its file declares it, with the skills resolved for it. The catalogue
// hands out copies; changing one changes nothing in the catalogue.
type Agent struct {
	// ID names the agent everywhere (key id, required): kebab case, like "concierge".
	ID string `json:"id"`
	// Handle is how the owner addresses it (key handle, required), with its @: "@dev". The
	// file may leave the @ out; it is added.
	Handle string `json:"handle"`
	// Name is the display name (key name, required).
	Name string `json:"name"`
	// Tools is the grant (key tools): tool names "<plugin>.<verb>", in file order. It is the
	// only thing that gives an agent a tool.
	Tools []string `json:"tools"`
	// Roles are the roles it claims (key roles): kebab strings whose shape is checked and
	// whose meaning is the surfaces' (front-desk, overview, recap, maker, …).
	Roles []string `json:"roles"`
	// Skills are the shared skills it names (key skills), in file order; see Loaded for
	// what it actually gets.
	Skills []string `json:"skills"`
	// Language is a BCP 47 tag (key language), canonicalised ("en", "pt-BR"); empty means
	// none declared.
	Language string `json:"language,omitempty"`
	// TurnBudget is the most model turns one run may take (key turn_budget, 1 to
	// MaxTurnBudget); 0 means none declared, and the runtime's default applies.
	TurnBudget int `json:"turn_budget,omitempty"`
	// IdleRollover is how long its conversation may sit idle before the owner's next message
	// starts a new one (key idle_rollover, a duration like "3h" or "90m"); 0 means none
	// declared. See [Agent.Rollover].
	IdleRollover time.Duration `json:"-"`
	// Default reports whether this is the catalogue's default agent (key default). It is the
	// effective answer: an owner's default: true beats an example's, so at most one agent in
	// a catalogue has it.
	Default bool `json:"default"`
	// Persona is the file's body, the markdown after the frontmatter.
	Persona string `json:"persona"`
	// Source is the half of the search path the file came from.
	Source Source `json:"source"`
	// Path is the file, as the owner would open it.
	Path string `json:"path"`
	// Loaded are the skills this agent gets, in order: the shared skills that load for it
	// (by name), then its private ones (by name). A private skill shadows a shared skill
	// of the same name.
	Loaded []Skill `json:"loaded_skills"`
}

// Rollover is the agent's idle rollover, or DefaultIdleRollover when its file declares none.
func (a Agent) Rollover() time.Duration {
	if a.IdleRollover > 0 {
		return a.IdleRollover
	}
	return DefaultIdleRollover
}

// HasRole reports whether the agent claims role.
func (a Agent) HasRole(role string) bool { return slices.Contains(a.Roles, role) }

// HasTool reports whether the agent's grant names tool.
func (a Agent) HasTool(tool string) bool { return slices.Contains(a.Tools, tool) }

// MarshalJSON writes the agent with idle_rollover as a duration string ("3h0m0s") when set.
func (a Agent) MarshalJSON() ([]byte, error) {
	type plain Agent
	out := struct {
		plain
		IdleRollover string `json:"idle_rollover,omitempty"`
	}{plain: plain(a)}
	if a.IdleRollover > 0 {
		out.IdleRollover = a.IdleRollover.String()
	}
	return json.Marshal(out)
}

// clone copies the agent's slices so a caller's changes stay its own.
func (a Agent) clone() Agent {
	a.Tools = slices.Clone(a.Tools)
	a.Roles = slices.Clone(a.Roles)
	a.Skills = slices.Clone(a.Skills)
	a.Loaded = slices.Clone(a.Loaded)
	for i := range a.Loaded {
		a.Loaded[i].Agents = slices.Clone(a.Loaded[i].Agents)
	}
	return a
}

// parseAgent reads one agent file. Every problem in it is added to ps; ok is false when
// there was any.
func parseAgent(path string, data []byte, source Source, ps *problems) (a Agent, ok bool) {
	before := len(*ps)
	fm, msg := splitFrontmatter(data)
	if msg != "" {
		ps.add(path, "%s", msg)
		return Agent{}, false
	}
	if !fm.present {
		ps.add(path, "the file has no frontmatter; an agent file starts with a line of three dashes, then id:, handle: and name: lines, another line of three dashes, and the persona")
		return Agent{}, false
	}
	a = Agent{Source: source, Path: path, Persona: fm.body, Tools: []string{}, Roles: []string{}, Skills: []string{}}
	bad := map[string]bool{}
	for _, f := range fm.fields {
		var msg string
		switch f.key {
		case "id":
			a.ID, msg = f.stringValue()
			if msg == "" && a.ID != "" && !validID(a.ID) {
				msg = fmt.Sprintf("id %q on line %d is not a valid id; use lower-case words joined by hyphens, like front-desk", a.ID, f.line)
			}
		case "handle":
			a.Handle, msg = f.stringValue()
			if msg == "" && a.Handle != "" {
				if !strings.HasPrefix(a.Handle, "@") {
					a.Handle = "@" + a.Handle
				}
				if !validHandle(a.Handle) {
					msg = fmt.Sprintf("handle %q on line %d is not a valid handle; use @ then lower-case letters and digits, like \"@dev\"", a.Handle, f.line)
				}
			}
		case "name":
			a.Name, msg = f.stringValue()
			if msg == "" && strings.ContainsAny(a.Name, "\n\r") {
				msg = fmt.Sprintf("name on line %d must be one line", f.line)
			}
		case "tools":
			a.Tools, msg = names(f, "developer.read, developer.run", validTool,
				"is not a tool name; name each tool as <plugin>.<verb>, like developer.read")
		case "roles":
			a.Roles, msg = names(f, "front-desk, recap", validRole,
				"is not a valid role; use lower-case words joined by hyphens, like front-desk")
		case "skills":
			a.Skills, msg = names(f, "house-rules", validSkill,
				"is not a valid skill name; a skill's name is its file name without .md, in lower case")
		case "language":
			var tag string
			tag, msg = f.stringValue()
			if msg == "" && tag != "" {
				t, err := language.Parse(tag)
				if err != nil {
					msg = fmt.Sprintf("language %q on line %d is not a language tag; use a BCP 47 tag like en, de or pt-BR", tag, f.line)
				} else {
					a.Language = t.String()
				}
			}
		case "turn_budget":
			a.TurnBudget, msg = f.intValue()
			if msg == "" && !isNull(f.value) && (a.TurnBudget < 1 || a.TurnBudget > MaxTurnBudget) {
				msg = fmt.Sprintf("turn_budget on line %d must be between 1 and %d", f.line, MaxTurnBudget)
			}
		case "idle_rollover":
			a.IdleRollover, msg = durationValue(f)
		case "default":
			a.Default, msg = f.boolValue()
		default:
			msg = fmt.Sprintf("the frontmatter key %q on line %d is not one an agent file takes; remove it or correct its spelling (the keys are %s)", f.key, f.line, strings.Join(agentKeys, ", "))
		}
		if msg != "" {
			bad[f.key] = true
			ps.add(path, "%s", msg)
		}
	}
	for _, key := range []struct{ name, value, example string }{
		{"id", a.ID, "id: concierge"},
		{"handle", a.Handle, `handle: "@concierge"`},
		{"name", a.Name, "name: Concierge"},
	} {
		if bad[key.name] {
			continue
		}
		if key.value == "" && !hasField(fm, key.name) {
			ps.add(path, "the frontmatter has no %s; add a line like %s", key.name, key.example)
		} else if key.value == "" {
			ps.add(path, "%s is empty; give it a value, like %s", key.name, key.example)
		}
	}
	if a.Persona == "" {
		ps.add(path, "the file has no persona; write it below the frontmatter")
	}
	return a, len(*ps) == before
}

// names reads a list of names, each checked by valid and none twice.
func names(f field, example string, valid func(string) bool, invalid string) ([]string, string) {
	list, msg := f.listValue(example)
	if msg != "" {
		return []string{}, msg
	}
	seen := map[string]bool{}
	for _, n := range list {
		if !valid(n) {
			return []string{}, fmt.Sprintf("%s on line %d: %q %s", f.key, f.line, n, invalid)
		}
		if seen[n] {
			return []string{}, fmt.Sprintf("%s on line %d names %s twice", f.key, f.line, n)
		}
		seen[n] = true
	}
	if list == nil {
		list = []string{}
	}
	return list, ""
}

// durationValue reads idle_rollover: a Go duration with its unit, within the bounds.
func durationValue(f field) (time.Duration, string) {
	if isNull(f.value) {
		return 0, ""
	}
	s, msg := f.stringValue()
	if msg != "" {
		return 0, msg
	}
	d, err := time.ParseDuration(s)
	if err != nil || f.value.Tag != "!!str" {
		return 0, fmt.Sprintf("%s on line %d must be a duration with its unit, like 3h or 90m", f.key, f.line)
	}
	if d < MinIdleRollover || d > MaxIdleRollover {
		return 0, fmt.Sprintf("%s on line %d must be between %s and %s", f.key, f.line, fmtDuration(MinIdleRollover), fmtDuration(MaxIdleRollover))
	}
	return d, ""
}

// fmtDuration writes a bound the way an owner would type it.
func fmtDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// hasField reports whether the frontmatter has key.
func hasField(fm frontmatter, key string) bool {
	for _, f := range fm.fields {
		if f.key == key {
			return true
		}
	}
	return false
}
