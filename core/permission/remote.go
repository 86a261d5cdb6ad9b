package permission

import "strings"

// Remote limits the modes that remote callers (gateway, RPC and MCP clients) may choose.
// The zero Remote gives accept-edits and lets no request go above it.
type Remote struct {
	// DefaultMode is the mode a request for none, or for an unknown mode, gets.
	// Default accept-edits; a value that is not a mode is read as plan.
	DefaultMode Mode
	// MaxMode is the ceiling of a request. Default: DefaultMode, so a request can only
	// tighten the mode unless the configuration raises the ceiling. A value that is not a
	// mode is read as plan.
	MaxMode Mode
}

// limits returns the effective default and ceiling. A default above the ceiling is
// lowered to it.
func (r Remote) limits() (def, ceiling Mode) {
	def = ModeAcceptEdits
	if r.DefaultMode != "" {
		def = known(r.DefaultMode)
	}
	ceiling = def
	if r.MaxMode != "" {
		ceiling = known(r.MaxMode)
	}
	return lower(def, ceiling), ceiling
}

// Mode returns the mode a remote caller gets for a request (the seed's remote_mode/1).
// An empty or unknown request gets the default mode; a request above the ceiling is
// lowered to it.
func (r Remote) Mode(requested Mode) Mode {
	def, ceiling := r.limits()
	if !requested.Valid() {
		return def
	}
	return lower(requested, ceiling)
}

// ApplyRemoteMode sets a.ExecutionMode for a remote caller (the seed's
// apply_remote_mode/2). With no request (empty), the harness default already in
// a.ExecutionMode is lowered to the ceiling, and one that is not a permission mode (for
// example "interactive") is left as it is. Otherwise the mode becomes r.Mode(requested).
func ApplyRemoteMode(a Agent, requested Mode, r Remote) Agent {
	if requested == "" {
		if a.ExecutionMode.Valid() {
			_, ceiling := r.limits()
			a.ExecutionMode = lower(a.ExecutionMode, ceiling)
		}
		return a
	}
	a.ExecutionMode = r.Mode(requested)
	return a
}

// remoteStripped are the keys a remote caller may not set, since each would lift the
// policy: skipping it, overriding the settings, or moving the workspace boundary.
var remoteStripped = []string{
	"dangerouslySkipPermissions",
	"settingsOverride",
	"paths",
	"workspacePaths",
	"trustedWorkspaces",
	"allowNonWorkspaceAccess",
}

// SanitizeRemoteAgent returns a copy of a client-supplied agent map without the keys
// that would lift the permission policy (dangerouslySkipPermissions, settingsOverride,
// and the path keys paths, workspacePaths, trustedWorkspaces and
// allowNonWorkspaceAccess), with executionMode limited by r.Mode (the seed's
// sanitize_remote_agent/1). Keys are matched without regard to case, as encoding/json
// matches field names, so "DangerouslySkipPermissions" is removed too. Every spelling of
// executionMode is replaced by one executionMode key, read from the exact spelling when
// it holds a string. The map is not modified.
func SanitizeRemoteAgent(agent map[string]any, r Remote) map[string]any {
	out := make(map[string]any, len(agent)+1)
	var requested Mode
	for k, v := range agent {
		if strings.EqualFold(k, "executionMode") {
			if s, ok := v.(string); ok && k == "executionMode" {
				requested = Mode(s)
			}
			continue
		}
		stripped := false
		for _, s := range remoteStripped {
			if strings.EqualFold(k, s) {
				stripped = true
				break
			}
		}
		if !stripped {
			out[k] = v
		}
	}
	out["executionMode"] = string(r.Mode(requested))
	return out
}
