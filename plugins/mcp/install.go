package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"buddi/plugins"
)

// Inspect starts the plugin's server, initialises it, lists its tools and stops it again:
// what `buddi plugins add` shows before the owner says yes.
func Inspect(ctx context.Context, p Plugin, opts ConnectOptions) (server, version string, listed []Listed, err error) {
	s, err := Connect(ctx, p, opts)
	if err != nil {
		return "", "", nil, err
	}
	defer s.Close()
	server, version = s.Server()
	listed, err = s.Tools(ctx)
	if err != nil {
		return "", "", nil, fmt.Errorf("plugin %s: %w", p.Name, err)
	}
	return server, version, listed, nil
}

// Build is the plugin as it would be recorded: p's name and transport, the tools the server
// listed with their tiers and effects from m (nil: every tool gated), and the manifest's
// description, network lines and suggestions. A tool whose tier the owner set in previous
// (an earlier install) keeps it while its schema is unchanged.
func Build(p Plugin, server, serverVersion string, listed []Listed, m *Manifest, manifestPath string, previous *Plugin, now time.Time) Plugin {
	out := p
	out.Server = server
	out.Version = serverVersion
	out.Manifest = ""
	out.InstalledAt = now.UTC()
	out.Tools = nil
	if m != nil {
		out.Manifest = manifestPath
		if m.Version != "" {
			out.Version = m.Version
		}
		out.Description, out.Network, out.Missions, out.Agents = m.Description, m.Network, m.Missions, m.Agents
	}
	if strings.TrimSpace(out.Version) == "" {
		out.Version = "0"
	}
	names := make([]string, len(listed))
	for i, l := range listed {
		names[i] = l.Name
	}
	vs := verbs(names)
	for _, l := range listed {
		t := Tool{MCPName: l.Name, Name: p.Name + "." + vs[l.Name], Description: l.Description, Schema: l.Schema, SchemaHash: l.SchemaHash,
			Tier: plugins.TierGated, Effects: slices.Clone(DefaultEffects), TierFrom: "default"}
		if m != nil {
			if tp, ok := m.Tools[l.Name]; ok {
				t.Tier, t.Effects, t.TierFrom = tp.Tier, slices.Clone(tp.Effects), "manifest"
			}
		}
		if previous != nil && t.TierFrom != "manifest" {
			if old, ok := previous.Tool(l.Name); ok && old.TierFrom == "owner" && old.SchemaHash == l.SchemaHash {
				t.Tier, t.TierFrom = old.Tier, "owner"
			}
		}
		out.Tools = append(out.Tools, t)
	}
	SortTools(out.Tools)
	return out
}

// Change is one difference between the tools accepted and the tools the server lists now.
type Change struct {
	// Tool is the MCP tool's name.
	Tool string `json:"tool"`
	// Kind is "added", "removed" or "schema".
	Kind string `json:"kind"`
}

// Sentence says the change in words.
func (c Change) Sentence() string {
	switch c.Kind {
	case "added":
		return c.Tool + " is new"
	case "removed":
		return c.Tool + " is no longer listed"
	default:
		return c.Tool + "'s arguments changed"
	}
}

// Diff compares the accepted tools with the listed ones, by MCP name, in name order.
func Diff(accepted []Tool, listed []Listed) []Change {
	now := map[string]Listed{}
	for _, l := range listed {
		now[l.Name] = l
	}
	var out []Change
	for _, t := range accepted {
		l, ok := now[t.MCPName]
		switch {
		case !ok:
			out = append(out, Change{Tool: t.MCPName, Kind: "removed"})
		case l.SchemaHash != t.SchemaHash:
			out = append(out, Change{Tool: t.MCPName, Kind: "schema"})
		}
		delete(now, t.MCPName)
	}
	for name := range now {
		out = append(out, Change{Tool: name, Kind: "added"})
	}
	slices.SortFunc(out, func(a, b Change) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}
