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
// edit applies to the next one, and the agent's workspace (from the developer plugin's
// record) as its workspace paths. Agents carry no execution mode yet, so each call is judged
// in auto mode, and a remote caller's (buddi mcp's) in seed 002's remote mode, accept-edits,
// where a call that mode does not allow becomes an approval: the owner's deny rules, network
// policy and workspace boundary refuse, and approvals come from the tools' declared tiers. A settings file or workspace record that
// cannot be read refuses the call (the executor fails closed on an error).
func ownerPolicy(home string, ws workspaces) func(context.Context, plugins.Call) (permission.Agent, permission.Settings, error) {
	path := permission.SettingsPath(home)
	return func(ctx context.Context, call plugins.Call) (permission.Agent, permission.Settings, error) {
		agent := permission.Agent{ExecutionMode: permission.ModeAuto}
		if ws != nil && call.Agent != "" {
			w, found, err := ws.Workspace(ctx, call.Agent)
			if err != nil {
				return agent, permission.Settings{}, err
			}
			if found {
				agent.WorkspacePaths = []string{w.Directory}
			}
		}
		if call.Remote { // seed 002: a remote caller's mode is clamped to the remote ceiling
			agent = permission.ApplyRemoteMode(agent, "", permission.Remote{})
		}
		s, err := permission.LoadEffectiveSettings(permission.Layer{}, path, agent)
		return agent, s, err
	}
}
