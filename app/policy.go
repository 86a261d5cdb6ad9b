package app

import (
	"context"

	"buddi/core/permission"
	"buddi/plugins"
	"buddi/plugins/developer"
)

// workspaces finds an agent's workspace directory; found is false when it has none.
type workspaces interface {
	Workspace(ctx context.Context, agent string) (developer.Workspace, bool, error)
}

// ownerPolicy gives the executor the permission engine's inputs for a call: the policy
// merged from configuration (none yet) and <home>/settings.json, read at every call so an
// edit applies to the next one; the agent's workspace (from the developer plugin's record)
// as its workspace paths; and the agent's execution mode as the owner set it (modes, read at
// every call: plan, accept-edits or auto, auto when never set; see app/modes.go). A remote
// caller's call (buddi mcp, Telegram) has that mode clamped by seed 002's remote rules
// (remote_default_mode and remote_max_mode, accept-edits unless settings.json says
// otherwise), where a call that mode does not allow becomes an approval. The owner's deny
// rules, network policy and workspace boundary refuse, and approvals also come from the
// tools' declared tiers. A settings file, mode or workspace record that cannot be read
// refuses the call (the executor fails closed on an error).
func ownerPolicy(home string, ws workspaces, modes agentModes) func(context.Context, plugins.Call) (permission.Agent, permission.Settings, error) {
	path := permission.SettingsPath(home)
	return func(ctx context.Context, call plugins.Call) (permission.Agent, permission.Settings, error) {
		agent, err := withMode(ctx, modes, call, permission.Agent{})
		if err != nil {
			return agent, permission.Settings{}, err
		}
		if ws != nil && call.Agent != "" {
			w, found, err := ws.Workspace(ctx, call.Agent)
			if err != nil {
				return agent, permission.Settings{}, err
			}
			if found {
				agent.WorkspacePaths = []string{w.Directory}
			}
		}
		s, err := permission.LoadEffectiveSettings(permission.Layer{}, path, agent)
		if err != nil {
			return agent, s, err
		}
		return clampRemote(call, agent, s), s, nil
	}
}
