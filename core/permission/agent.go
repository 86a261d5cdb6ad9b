package permission

// Agent is the part of an agent's configuration that the permission policy reads.
// Its JSON names are the seed's keys.
type Agent struct {
	// ExecutionMode is the mode the agent runs in. Empty, or a value that is not a
	// permission mode, is decided as plan.
	ExecutionMode Mode `json:"executionMode,omitempty"`
	// MaxExecutionMode is the harness ceiling; a higher ExecutionMode is lowered to it
	// (see ClampMode). Empty means no ceiling.
	MaxExecutionMode Mode `json:"maxExecutionMode,omitempty"`
	// DangerouslySkipPermissions answers every prompt with allow, so no approval is asked
	// for. It does not lift a block: the deny rules, the network policy, the workspace
	// boundary and plan mode still refuse. Default false; never taken from a remote caller.
	DangerouslySkipPermissions bool `json:"dangerouslySkipPermissions,omitempty"`
	// WorkspacePaths are the absolute directories this agent works in. With
	// TrustedWorkspaces they are the only places file tools may touch unless
	// allowNonWorkspaceAccess is true. Never taken from a remote caller.
	WorkspacePaths []string `json:"workspacePaths,omitempty"`
	// SettingsOverride is the session's layer of policy, the highest of the three
	// (see LoadEffectiveSettings). Never taken from a remote caller.
	SettingsOverride *Layer `json:"settingsOverride,omitempty"`
	// ModeNote, when set, says whose mode this is and how the owner changes it ("@dev is in
	// plan mode; the owner changes it with …"). A mode block's reason ends with it, so the
	// one sentence the model and the owner read names the mode and the way out. Never taken
	// from a remote caller.
	ModeNote string `json:"-"`
}
