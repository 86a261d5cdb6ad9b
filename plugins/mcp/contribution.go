package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"buddi/internal/text"
	"buddi/plugins"
)

// Contribution renders everything installing p gives buddi, as seed 004 asks the owner to
// see it before saying yes: every tool with its tier (the auto ones counted in the headline
// and listed first), each tool's arguments, what runs on a timer, the hosts it reaches and
// the agents and missions it proposes. Pure: the same plugin gives the same text.
func Contribution(p Plugin) string {
	var b strings.Builder
	auto := 0
	for _, t := range p.Tools {
		if t.Tier == plugins.TierAuto {
			auto++
		}
	}
	fmt.Fprintf(&b, "Plugin %s %s (%s)", p.Name, p.Version, p.Transport())
	if p.Server != "" {
		fmt.Fprintf(&b, ", server %q", p.Server)
	}
	b.WriteString("\n")
	if p.Description != "" {
		b.WriteString(p.Description + "\n")
	}
	fmt.Fprintf(&b, "%d %s: %d auto (%s), %d gated (each call waits for your approval).\n",
		len(p.Tools), text.Plural(len(p.Tools), "tool"), auto, autoNote(auto), len(p.Tools)-auto)
	b.WriteString("buddi started the server to read this: installing runs someone else's program on this machine, outside any sandbox, and you trust its author's tiers.\n")
	if p.Manifest == "" {
		fmt.Fprintf(&b, "It has no buddi manifest: every tool is gated until you set a tier with `buddi plugins tier %s TOOL auto|gated`.\n", p.Name)
	} else {
		fmt.Fprintf(&b, "Tiers and effects from %s.\n", p.Manifest)
	}
	tools := slices.Clone(p.Tools)
	SortTools(tools)
	for _, group := range []plugins.Tier{plugins.TierAuto, plugins.TierGated} {
		first := true
		for _, t := range tools {
			if t.Tier != group {
				continue
			}
			if first {
				fmt.Fprintf(&b, "\n%s:\n", strings.ToUpper(string(group[:1]))+string(group[1:]))
				first = false
			}
			fmt.Fprintf(&b, "  %s  [%s; %s]\n", t.Name, t.Tier, effectList(t.Effects))
			if t.MCPName != strings.TrimPrefix(t.Name, p.Name+".") {
				fmt.Fprintf(&b, "      the server's %q\n", t.MCPName)
			}
			if d := firstLine(t.Description); d != "" {
				fmt.Fprintf(&b, "      %s\n", d)
			}
			fmt.Fprintf(&b, "      arguments: %s\n", SchemaSummary(t.Schema))
		}
	}
	b.WriteString("\nRuns on a timer: nothing (an MCP plugin has no sources).\n")
	if len(p.Network) == 0 {
		b.WriteString("Hosts it reaches: none declared (nothing enforces this).\n")
	} else {
		b.WriteString("Hosts it reaches (as it declares; nothing enforces this):\n")
		for _, n := range p.Network {
			b.WriteString("  " + n + "\n")
		}
	}
	if len(p.Missions) > 0 {
		b.WriteString("Suggested missions (installing accepts none):\n")
		for _, m := range p.Missions {
			fmt.Fprintf(&b, "  %s  at %q, for the %s role: %s\n", m.ID, m.Cron, cmpOr(m.Role, "default"), firstLine(m.Prompt))
		}
	}
	if len(p.Agents) > 0 {
		b.WriteString("Proposed agents (installing writes none):\n")
		for _, a := range p.Agents {
			fmt.Fprintf(&b, "  %s %s, with the tools: %s\n", a.ID, a.Handle, strings.Join(a.Tools, ", "))
		}
	}
	return b.String()
}

func autoNote(n int) string {
	if n == 0 {
		return "none runs without asking you"
	}
	return "they run the first time a model calls them, without asking you"
}

func effectList(es []plugins.Effect) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = string(e)
	}
	return strings.Join(s, ", ")
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:157] + "…"
	}
	return s
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// SchemaSummary says an input schema's top-level properties with their types, the required
// ones marked: "entities (array, required), limit (integer)"; "none" for an empty object.
func SchemaSummary(schema json.RawMessage) string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return "(a schema buddi cannot read)"
	}
	if len(s.Properties) == 0 {
		return "none"
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		typ := "any"
		switch t := s.Properties[n].Type.(type) {
		case string:
			typ = t
		case []any:
			ts := make([]string, 0, len(t))
			for _, x := range t {
				ts = append(ts, fmt.Sprint(x))
			}
			typ = strings.Join(ts, "|")
		}
		if slices.Contains(s.Required, n) {
			typ += ", required"
		}
		parts[i] = fmt.Sprintf("%s (%s)", n, typ)
	}
	return strings.Join(parts, ", ")
}
