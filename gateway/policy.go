package gateway

import (
	"context"

	"buddi/core/permission"
	"buddi/plugins"
)

// ownerPolicy gives the executor the permission engine's inputs for a call: the policy
// merged from configuration (none yet) and <home>/settings.json, read at every call so an
// edit applies to the next one. Agents carry no execution mode yet, so each call is judged
// in auto mode: the owner's deny rules, network policy and workspace boundary refuse, and
// approvals come from the tools' declared tiers. A settings file that cannot be read refuses
// every call (the executor fails closed on an error).
func ownerPolicy(home string) func(context.Context, plugins.Call) (permission.Agent, permission.Settings, error) {
	path := permission.SettingsPath(home)
	return func(context.Context, plugins.Call) (permission.Agent, permission.Settings, error) {
		agent := permission.Agent{ExecutionMode: permission.ModeAuto}
		s, err := permission.LoadEffectiveSettings(permission.Layer{}, path, agent)
		return agent, s, err
	}
}
