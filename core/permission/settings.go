package permission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SettingsFile is the name of the settings file in buddi's data directory.
const SettingsFile = "settings.json"

// ErrInvalidPolicy is matched (errors.Is) by every *PolicyError.
var ErrInvalidPolicy = errors.New("permission: invalid policy")

// PolicyError reports one field of a policy layer that cannot be used.
type PolicyError struct {
	// Field is the seed's key, for example "permissions.deny" or "network".
	Field string
	// Value is the offending value as written.
	Value string
	// Problem says what is wrong, in a few words.
	Problem string
}

// Error renders the field, its value and the problem.
func (e *PolicyError) Error() string {
	return fmt.Sprintf("%s %q: %s", e.Field, e.Value, e.Problem)
}

// Is makes errors.Is(err, ErrInvalidPolicy) true.
func (e *PolicyError) Is(target error) bool {
	return target == ErrInvalidPolicy
}

// Rules holds the permissions key: command(...) patterns.
type Rules struct {
	// Allow opens shell commands in accept-edits mode.
	Allow []string `json:"allow,omitempty"`
	// Deny blocks shell commands in every mode.
	Deny []string `json:"deny,omitempty"`
}

// Layer is one source of policy: the configuration, settings.json, or the session's
// override. A nil pointer or an empty list sets nothing; see Merge for how layers combine.
// The JSON names are the seed's keys; unknown keys are ignored, since settings.json holds
// other settings too.
type Layer struct {
	// AllowNonWorkspaceAccess, when true, lets file tools touch paths outside the
	// workspace. Default false.
	AllowNonWorkspaceAccess *bool `json:"allowNonWorkspaceAccess,omitempty"`
	// Permissions holds the command(...) allow and deny rules.
	Permissions Rules `json:"permissions,omitzero"`
	// Network is the network policy: allow, allowlist or deny. Default allow.
	Network *NetworkPolicy `json:"network,omitempty"`
	// NetworkInPlanMode, when false, blocks network reads in plan mode. Default true.
	NetworkInPlanMode *bool `json:"network_in_plan_mode,omitempty"`
	// NetworkAllowHosts are the hosts an allowlist admits, each with its subdomains.
	NetworkAllowHosts []string `json:"networkAllowHosts,omitempty"`
	// TrustedWorkspaces are absolute directories that file tools may touch besides the
	// agent's workspacePaths.
	TrustedWorkspaces []string `json:"trustedWorkspaces,omitempty"`
	// RemoteDefaultMode is the mode a remote caller gets when it asks for none or for an
	// unknown one. Default accept-edits.
	RemoteDefaultMode *Mode `json:"remote_default_mode,omitempty"`
	// RemoteMaxMode is the highest mode a remote caller may ask for. Default: the remote
	// default mode.
	RemoteMaxMode *Mode `json:"remote_max_mode,omitempty"`
}

// Settings is the effective policy: the layers merged, defaults filled in. Build it with
// Merge or LoadEffectiveSettings. The zero Settings is usable and at least as strict as
// the defaults: it differs from them only in NetworkInPlanMode, which is false.
type Settings struct {
	// AllowNonWorkspaceAccess lifts the workspace confinement of file tools.
	AllowNonWorkspaceAccess bool
	// Allow holds the command(...) rules that open shell commands in accept-edits mode.
	Allow []string
	// Deny holds the command(...) rules that block shell commands in every mode.
	Deny []string
	// Network is the network policy; empty means allow. See Settings.NetworkPolicy.
	Network NetworkPolicy
	// NetworkInPlanMode allows network reads in plan mode. Merge defaults it to true.
	NetworkInPlanMode bool
	// NetworkAllowHosts are the hosts an allowlist admits, each with its subdomains.
	NetworkAllowHosts []string
	// TrustedWorkspaces are directories file tools may touch besides the agent's
	// workspacePaths.
	TrustedWorkspaces []string
	// Remote limits the modes remote callers may choose.
	Remote Remote
}

// Merge combines layers, lowest priority first (config, then settings.json, then the
// session override), over the defaults. Each field merges this way:
//
//   - allowNonWorkspaceAccess, network, network_in_plan_mode, remote_default_mode and
//     remote_max_mode: the highest layer that sets the key wins; a layer that leaves it
//     unset changes nothing.
//   - permissions.allow, permissions.deny, networkAllowHosts and trustedWorkspaces: the
//     union of every layer's list, in order of first appearance, without duplicates. A
//     higher layer adds entries and cannot remove a lower layer's; a deny rule therefore
//     survives every override.
//
// Merge does not validate; see Layer.Validate. An invalid value is read strictly when
// deciding: an unknown network policy as deny, an unreadable allow rule or host entry as
// matching nothing, an unreadable deny rule as blocking every shell command.
func Merge(layers ...Layer) Settings {
	s := Settings{Network: NetworkAllow, NetworkInPlanMode: true}
	for _, l := range layers {
		if l.AllowNonWorkspaceAccess != nil {
			s.AllowNonWorkspaceAccess = *l.AllowNonWorkspaceAccess
		}
		if l.Network != nil {
			s.Network = *l.Network
		}
		if l.NetworkInPlanMode != nil {
			s.NetworkInPlanMode = *l.NetworkInPlanMode
		}
		if l.RemoteDefaultMode != nil {
			s.Remote.DefaultMode = *l.RemoteDefaultMode
		}
		if l.RemoteMaxMode != nil {
			s.Remote.MaxMode = *l.RemoteMaxMode
		}
		s.Allow = union(s.Allow, l.Permissions.Allow)
		s.Deny = union(s.Deny, l.Permissions.Deny)
		s.NetworkAllowHosts = union(s.NetworkAllowHosts, l.NetworkAllowHosts)
		s.TrustedWorkspaces = union(s.TrustedWorkspaces, l.TrustedWorkspaces)
	}
	return s
}

// union appends the entries of add that acc does not hold yet.
func union(acc, add []string) []string {
	for _, v := range add {
		dup := false
		for _, have := range acc {
			if have == v {
				dup = true
				break
			}
		}
		if !dup {
			acc = append(acc, v)
		}
	}
	return acc
}

// Validate reports every field of the layer that cannot be used, joined; nil when all
// can. Each error is a *PolicyError.
func (l Layer) Validate() error {
	var errs []error
	bad := func(field, value, problem string) {
		errs = append(errs, &PolicyError{Field: field, Value: value, Problem: problem})
	}
	if l.Network != nil && !l.Network.Valid() {
		bad("network", string(*l.Network), "want allow, allowlist or deny")
	}
	if l.RemoteDefaultMode != nil && !l.RemoteDefaultMode.Valid() {
		bad("remote_default_mode", string(*l.RemoteDefaultMode), "want plan, accept-edits or auto")
	}
	if l.RemoteMaxMode != nil && !l.RemoteMaxMode.Valid() {
		bad("remote_max_mode", string(*l.RemoteMaxMode), "want plan, accept-edits or auto")
	}
	for _, r := range l.Permissions.Allow {
		if _, err := ParseRule(r); err != nil {
			bad("permissions.allow", r, ruleProblem(err))
		}
	}
	for _, r := range l.Permissions.Deny {
		if _, err := ParseRule(r); err != nil {
			bad("permissions.deny", r, ruleProblem(err))
		}
	}
	for _, h := range l.NetworkAllowHosts {
		if _, ok := normalizeHost(h); !ok {
			bad("networkAllowHosts", h, "want a bare host name or IP address, such as example.com")
		}
	}
	for _, p := range l.TrustedWorkspaces {
		if !filepath.IsAbs(p) {
			bad("trustedWorkspaces", p, "want an absolute path")
		}
	}
	return errors.Join(errs...)
}

// ruleProblem is the part of a rule error after the rule itself.
func ruleProblem(err error) string {
	var re *RuleError
	if errors.As(err, &re) {
		return re.Problem
	}
	return err.Error()
}

// ParseLayer reads one layer from JSON (the content of settings.json) and validates it.
// Empty input, only white space, or null is an empty layer.
func ParseLayer(data []byte) (Layer, error) {
	l, err := parseLayer(data)
	if err != nil {
		return Layer{}, fmt.Errorf("permission: parse settings: %w", err)
	}
	return l, nil
}

// parseLayer is ParseLayer without the package's prefix on its errors.
func parseLayer(data []byte) (Layer, error) {
	var l Layer
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return l, nil
	}
	if err := json.Unmarshal(trimmed, &l); err != nil {
		return Layer{}, err
	}
	if err := l.Validate(); err != nil {
		return Layer{}, err
	}
	return l, nil
}

// SettingsPath is the path of settings.json in buddi's data directory.
func SettingsPath(dataDir string) string {
	return filepath.Join(dataDir, SettingsFile)
}

// ReadLayerFile reads and validates the settings file at path. A file that does not exist
// is an empty layer; any other failure is an error naming the path.
func ReadLayerFile(path string) (Layer, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Layer{}, nil
	}
	if err != nil {
		return Layer{}, fmt.Errorf("permission: read settings: %w", err)
	}
	l, err := parseLayer(data)
	if err != nil {
		return Layer{}, fmt.Errorf("permission: settings %s: %w", path, err)
	}
	return l, nil
}

// LoadEffectiveSettings builds the effective policy for an agent (the seed's
// load_effective_settings/1): config, then the settings file at settingsPath (see
// SettingsPath), then the agent's SettingsOverride. Every layer is validated; an invalid
// one is an error naming its source, and no policy is returned.
func LoadEffectiveSettings(config Layer, settingsPath string, a Agent) (Settings, error) {
	if err := config.Validate(); err != nil {
		return Settings{}, fmt.Errorf("permission: config: %w", err)
	}
	file, err := ReadLayerFile(settingsPath)
	if err != nil {
		return Settings{}, err
	}
	var override Layer
	if a.SettingsOverride != nil {
		override = *a.SettingsOverride
		if err := override.Validate(); err != nil {
			return Settings{}, fmt.Errorf("permission: session settingsOverride: %w", err)
		}
	}
	return Merge(config, file, override), nil
}
