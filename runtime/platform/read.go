package platform

import (
	"encoding/json"
	"fmt"
	"strings"

	"buddi/agents"
	"buddi/internal/text"
	"buddi/plugins"
)

// rosterEntry is one agent as platform.roster lists it.
type rosterEntry struct {
	ID     string   `json:"id"`
	Handle string   `json:"handle"`
	Name   string   `json:"name"`
	Roles  []string `json:"roles"`
	Tools  int      `json:"tools"`
	Source string   `json:"source"`
	Writes bool     `json:"makes_agents,omitempty"`
}

// sourceWord says where an agent's file is from, for a model.
func sourceWord(s agents.Source) string {
	if s == agents.SourceExample {
		return "example"
	}
	return "owner's"
}

func roster(d *Deps, _ plugins.Call) (plugins.Result, error) {
	cat, err := d.Catalog()
	if err != nil {
		return plugins.Result{Text: "The agents do not load: " + err.Error(), IsError: true}, nil
	}
	var lines []string
	var out []rosterEntry
	for _, a := range cat.All() {
		e := rosterEntry{ID: a.ID, Handle: a.Handle, Name: a.Name, Roles: a.Roles, Tools: len(a.Tools), Source: sourceWord(a.Source), Writes: a.HoldsPlatformWrites()}
		out = append(out, e)
		roles := "no roles"
		if len(a.Roles) > 0 {
			roles = "roles " + strings.Join(a.Roles, ", ")
		}
		lines = append(lines, fmt.Sprintf("%s (id %s) %s: %s; %s; %s file", a.Handle, a.ID, a.Name, roles, count(len(a.Tools), "tool"), e.Source))
	}
	data, err := json.Marshal(out)
	if err != nil {
		return plugins.Result{}, fmt.Errorf("encode the roster: %w", err)
	}
	return plugins.Result{Text: strings.Join(lines, "\n"), Data: data}, nil
}

// refArgs name one agent.
type refArgs struct {
	Agent string `json:"agent"`
}

// find returns the agent ref names (id, or handle with or without its @).
func find(cat *agents.Catalog, ref string) (agents.Agent, bool) {
	ref = strings.TrimSpace(ref)
	if a, ok := cat.ByID(ref); ok {
		return a, true
	}
	return cat.ByHandle(ref)
}

func agentFile(d *Deps, call plugins.Call) (plugins.Result, error) {
	var args refArgs
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return plugins.Result{}, fmt.Errorf("read the arguments: %w", err)
	}
	cat, err := d.Catalog()
	if err != nil {
		return plugins.Result{Text: "The agents do not load: " + err.Error(), IsError: true}, nil
	}
	a, ok := find(cat, args.Agent)
	if !ok {
		return plugins.Result{Text: "There is no agent " + args.Agent + "; platform.roster lists them.", IsError: true}, nil
	}
	data, _, err := agents.ReadSource(d.Agents, a)
	if err != nil {
		return plugins.Result{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (id %s), the %s file %s:\n\n%s\n", a.Handle, a.ID, sourceWord(a.Source), a.Path, strings.TrimRight(string(data), "\n"))
	b.WriteString("\n" + grantText(resolve(d, a.Tools)))
	if len(a.Loaded) > 0 {
		names := make([]string, len(a.Loaded))
		for i, s := range a.Loaded {
			names[i] = s.Name
		}
		fmt.Fprintf(&b, "\nSkills it loads: %s.\n", strings.Join(names, ", "))
	}
	return plugins.Result{Text: b.String()}, nil
}

func installedTools(d *Deps, _ plugins.Call) (plugins.Result, error) {
	if d.Tools == nil {
		return plugins.Result{Text: "No tools are installed here.", IsError: true}, nil
	}
	var lines []string
	for _, s := range d.Tools.Tools() {
		lines = append(lines, fmt.Sprintf("%s (%s): %s", s.Name, s.Tier, text.FirstLine(s.Description)))
	}
	return plugins.Result{Text: strings.Join(lines, "\n")}, nil
}

func skills(d *Deps, call plugins.Call) (plugins.Result, error) {
	var args struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return plugins.Result{}, fmt.Errorf("read the arguments: %w", err)
	}
	cat, err := d.Catalog()
	if err != nil {
		return plugins.Result{Text: "The agents do not load: " + err.Error(), IsError: true}, nil
	}
	var lines []string
	for _, s := range cat.Skills() {
		if args.Name != "" {
			if s.Name == args.Name {
				return plugins.Result{Text: fmt.Sprintf("The %s skill %s (%s):\n\n%s\n", sourceWord(s.Source), s.Name, s.Path, s.Body)}, nil
			}
			continue
		}
		who := "every agent"
		if !s.Everyone {
			who = strings.Join(s.Agents, ", ")
		}
		desc := s.Description
		if desc == "" {
			desc = text.FirstLine(s.Body)
		}
		lines = append(lines, fmt.Sprintf("%s: %s (loads for %s; %s file)", s.Name, desc, who, sourceWord(s.Source)))
	}
	if args.Name != "" {
		return plugins.Result{Text: "There is no shared skill " + args.Name + ".", IsError: true}, nil
	}
	if len(lines) == 0 {
		return plugins.Result{Text: "There are no shared skills."}, nil
	}
	return plugins.Result{Text: strings.Join(lines, "\n")}, nil
}

// grantLine is one tool of a grant with its tier.
type grantLine struct {
	Tool string       `json:"tool"`
	Tier plugins.Tier `json:"tier"`
}

// resolve gives each tool of a grant its declared tier ("unknown" for none registered).
func resolve(d *Deps, tools []string) []grantLine {
	tiers := map[string]plugins.Tier{}
	if d.Tools != nil {
		for _, s := range d.Tools.Tools() {
			tiers[s.Name] = s.Tier
		}
	}
	out := make([]grantLine, 0, len(tools))
	for _, t := range tools {
		tier, ok := tiers[t]
		if !ok {
			tier = "unknown"
		}
		out = append(out, grantLine{Tool: t, Tier: tier})
	}
	return out
}

// grantText writes a resolved grant for the owner and the model, the auto tools counted.
func grantText(g []grantLine) string {
	if len(g) == 0 {
		return "Its grant is empty: it can talk and no more.\n"
	}
	auto := 0
	width := 0
	for _, l := range g {
		if l.Tier == plugins.TierAuto {
			auto++
		}
		width = max(width, len(l.Tool))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Its grant (%s; %d run without asking):\n", count(len(g), "tool"), auto)
	for _, l := range g {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, l.Tool, l.Tier)
	}
	return b.String()
}

// count is "n word(s)".
func count(n int, word string) string { return fmt.Sprintf("%d %s", n, text.Plural(n, word)) }
