package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"buddi/plugins"
)

// ManifestFile is the name of the buddi manifest beside an MCP server.
const ManifestFile = "buddi-plugin.json"

// Manifest is buddi-plugin.json: what buddi needs to know about an MCP server that the
// protocol does not say.
type Manifest struct {
	// Version is the plugin's version; empty takes the server's.
	Version string `json:"version,omitempty"`
	// Description says in one line what the plugin is for.
	Description string `json:"description,omitempty"`
	// Tools give each MCP tool, by its MCP name, its tier and effects. A tool the server
	// lists and the manifest does not is gated.
	Tools map[string]ToolPolicy `json:"tools,omitempty"`
	// Network has one line per host the plugin reaches and what it sends there.
	Network []string `json:"network,omitempty"`
	// Missions are scheduled work the plugin suggests.
	Missions []SuggestedMission `json:"missions,omitempty"`
	// Agents are agents the plugin proposes.
	Agents []SuggestedAgent `json:"agents,omitempty"`
}

// ToolPolicy is one tool's tier and effects.
type ToolPolicy struct {
	// Tier is "auto" or "gated".
	Tier plugins.Tier `json:"tier"`
	// Effects are what a call may do (read, fs_write, exec, net_read, net_write, state_write).
	Effects []plugins.Effect `json:"effects"`
}

// SuggestedMission is scheduled work a plugin suggests; the owner accepts it or not.
type SuggestedMission struct {
	// ID names the mission.
	ID string `json:"id"`
	// Cron is when it runs.
	Cron string `json:"cron"`
	// Prompt is what the run is asked.
	Prompt string `json:"prompt"`
	// Role is the role of the agent that should run it.
	Role string `json:"role,omitempty"`
}

// SuggestedAgent is an agent a plugin proposes: the owner is shown its grant tool by tool.
type SuggestedAgent struct {
	// ID is the agent's id.
	ID string `json:"id"`
	// Handle is how the owner would address it.
	Handle string `json:"handle,omitempty"`
	// Name is its display name.
	Name string `json:"name,omitempty"`
	// Tools is the grant it asks for.
	Tools []string `json:"tools,omitempty"`
	// Persona is its prompt.
	Persona string `json:"persona,omitempty"`
}

// ReadManifest reads a buddi manifest at path and checks its tiers and effects.
func ReadManifest(path string) (Manifest, error) {
	var m Manifest
	raw, err := os.ReadFile(path)
	if err != nil {
		return m, fmt.Errorf("read the plugin's manifest: %w", err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("read the plugin's manifest %s: %w", path, err)
	}
	for name, tp := range m.Tools {
		if tp.Tier != plugins.TierAuto && tp.Tier != plugins.TierGated {
			return m, fmt.Errorf("the plugin's manifest %s gives %s the tier %q: a plugin's tool is auto or gated", path, name, tp.Tier)
		}
		if len(tp.Effects) == 0 {
			return m, fmt.Errorf("the plugin's manifest %s declares no effects for %s", path, name)
		}
		for _, e := range tp.Effects {
			if !e.Valid() {
				return m, fmt.Errorf("the plugin's manifest %s declares an unknown effect %q for %s", path, e, name)
			}
		}
	}
	return m, nil
}

// FindManifest looks for buddi-plugin.json in dirs, in order, and returns the first path
// found, or "" when none has one.
func FindManifest(dirs ...string) (string, error) {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p := filepath.Join(d, ManifestFile)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("look for the plugin's manifest: %w", err)
		}
	}
	return "", nil
}

// DefaultEffects are a tool's effects when no manifest names them: the server is someone
// else's program and may do anything.
var DefaultEffects = []plugins.Effect{plugins.EffectExec}
