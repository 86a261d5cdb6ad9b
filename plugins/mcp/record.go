package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"buddi/core/canonical"
	"buddi/plugins"
)

// RecordFile is the name of the record in buddi's home.
const RecordFile = "plugins.json"

// Record is plugins.json: every installed plugin.
type Record struct {
	// Plugins are the installed plugins, by name.
	Plugins []Plugin `json:"plugins"`
}

// Plugin is one installed plugin as the owner accepted it.
type Plugin struct {
	// Name is the plugin's name: its tools are "<name>.<tool>".
	Name string `json:"name"`
	// Command is the stdio server's program and its arguments; empty for a URL plugin.
	Command []string `json:"command,omitempty"`
	// URL is the streamable HTTP endpoint on loopback; empty for a stdio plugin.
	URL string `json:"url,omitempty"`
	// Env are KEY=VALUE lines the stdio server gets besides PATH, HOME, USER, LANG and TMPDIR.
	Env []string `json:"env,omitempty"`
	// Dir is the plugin's directory: the stdio server's working directory, where its
	// buddi-plugin.json is looked for.
	Dir string `json:"dir,omitempty"`
	// Version is the plugin's version (the manifest's, else the server's): part of every
	// action's hash.
	Version string `json:"version"`
	// Server is the name the server gave itself when it was initialised.
	Server string `json:"server,omitempty"`
	// Description says in one line what the plugin is for.
	Description string `json:"description,omitempty"`
	// Manifest is the path of the buddi manifest read at install; empty when there was none.
	Manifest string `json:"manifest,omitempty"`
	// Network has one line per host the plugin reaches and what it sends (from the manifest).
	Network []string `json:"network,omitempty"`
	// Missions are the scheduled work the manifest suggests; installing accepts none.
	Missions []SuggestedMission `json:"missions,omitempty"`
	// Agents are the agents the manifest proposes; installing writes none.
	Agents []SuggestedAgent `json:"agents,omitempty"`
	// Tools are the server's tools as they were accepted.
	Tools []Tool `json:"tools"`
	// InstalledAt is when the owner accepted this list of tools.
	InstalledAt time.Time `json:"installed_at"`
}

// Tool is one tool of a plugin as it was accepted.
type Tool struct {
	// MCPName is the server's name for the tool.
	MCPName string `json:"mcp_name"`
	// Name is buddi's: "<plugin>.<verb>", the verb the MCP name sanitised.
	Name string `json:"name"`
	// Description is the server's description of the tool, told to the model.
	Description string `json:"description,omitempty"`
	// Schema is the tool's input schema as the server listed it.
	Schema json.RawMessage `json:"schema"`
	// SchemaHash is the sha256 of the schema's canonical JSON: a change disables the tool.
	SchemaHash string `json:"schema_hash"`
	// Tier is auto or gated.
	Tier plugins.Tier `json:"tier"`
	// Effects are what a call may do, from the manifest; without one, exec.
	Effects []plugins.Effect `json:"effects"`
	// TierFrom says who set the tier: "manifest", "owner", or "default" (gated, no manifest).
	TierFrom string `json:"tier_from"`
}

// RecordPath is plugins.json in home.
func RecordPath(home string) string { return filepath.Join(home, RecordFile) }

// LoadRecord reads plugins.json from home; a missing file is an empty record.
func LoadRecord(home string) (Record, error) {
	var r Record
	raw, err := os.ReadFile(RecordPath(home))
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("read the plugins' record: %w", err)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("read the plugins' record %s: %w", RecordPath(home), err)
	}
	return r, nil
}

// Save writes r to plugins.json in home, whole or not at all (a temporary file renamed).
func (r Record) Save(home string) error {
	slices.SortFunc(r.Plugins, func(a, b Plugin) int { return strings.Compare(a.Name, b.Name) })
	if r.Plugins == nil {
		r.Plugins = []Plugin{}
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("write the plugins' record: %w", err)
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("write the plugins' record: %w", err)
	}
	tmp, err := os.CreateTemp(home, ".plugins-*.json")
	if err != nil {
		return fmt.Errorf("write the plugins' record: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write the plugins' record: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write the plugins' record: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write the plugins' record: %w", err)
	}
	if err := os.Rename(tmp.Name(), RecordPath(home)); err != nil {
		return fmt.Errorf("write the plugins' record: %w", err)
	}
	return nil
}

// Find returns the plugin named name.
func (r Record) Find(name string) (Plugin, bool) {
	for _, p := range r.Plugins {
		if p.Name == name {
			return p, true
		}
	}
	return Plugin{}, false
}

// Put adds p, or replaces the plugin of its name.
func (r *Record) Put(p Plugin) {
	for i := range r.Plugins {
		if r.Plugins[i].Name == p.Name {
			r.Plugins[i] = p
			return
		}
	}
	r.Plugins = append(r.Plugins, p)
}

// Remove drops the plugin named name and reports whether it was there.
func (r *Record) Remove(name string) bool {
	n := len(r.Plugins)
	r.Plugins = slices.DeleteFunc(r.Plugins, func(p Plugin) bool { return p.Name == name })
	return len(r.Plugins) != n
}

// Transport says how buddi reaches the plugin: "stdio: <command>" or "http: <url>".
func (p Plugin) Transport() string {
	if p.URL != "" {
		return "http: " + p.URL
	}
	return "stdio: " + strings.Join(p.Command, " ")
}

// Tool returns the plugin's tool whose buddi name or MCP name is name.
func (p Plugin) Tool(name string) (Tool, bool) {
	for _, t := range p.Tools {
		if t.Name == name || t.MCPName == name || t.Name == p.Name+"."+name {
			return t, true
		}
	}
	return Tool{}, false
}

// SchemaHash is the sha256 of the schema's canonical JSON, in hex.
func SchemaHash(schema json.RawMessage) string {
	c, err := canonical.JSON(schema)
	if err != nil {
		c = schema
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:])
}

// SortTools orders tools as the owner is shown them: the auto ones first (they run the
// first time a model calls them), then by name.
func SortTools(tools []Tool) {
	slices.SortStableFunc(tools, func(a, b Tool) int {
		if (a.Tier == plugins.TierAuto) != (b.Tier == plugins.TierAuto) {
			if a.Tier == plugins.TierAuto {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// SetTier sets the tier of the plugin's tool (by its buddi or MCP name) as the owner's
// choice: auto or gated.
func (r *Record) SetTier(plugin, toolName string, tier plugins.Tier) (Tool, error) {
	if tier != plugins.TierAuto && tier != plugins.TierGated {
		return Tool{}, fmt.Errorf("%q is not a tier for a plugin's tool: say auto or gated", tier)
	}
	for i := range r.Plugins {
		p := &r.Plugins[i]
		if p.Name != plugin {
			continue
		}
		for j := range p.Tools {
			t := &p.Tools[j]
			if t.Name == toolName || t.MCPName == toolName || t.Name == plugin+"."+toolName {
				t.Tier, t.TierFrom = tier, "owner"
				SortTools(p.Tools)
				got, _ := p.Tool(toolName)
				return got, nil
			}
		}
		names := make([]string, len(p.Tools))
		for j, t := range p.Tools {
			names[j] = t.Name
		}
		return Tool{}, fmt.Errorf("plugin %s has no tool %s; it has: %s", plugin, toolName, strings.Join(names, ", "))
	}
	return Tool{}, fmt.Errorf("no plugin %s is installed: `buddi plugins list` shows what is", plugin)
}
