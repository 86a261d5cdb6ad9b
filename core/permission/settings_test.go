package permission

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseLayer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		json    string
		want    Layer
		wantErr string // a substring of the error; "" for none
	}{
		{"empty", "", Layer{}, ""},
		{"white space", " \n\t", Layer{}, ""},
		{"null", "null", Layer{}, ""},
		{"empty object", "{}", Layer{}, ""},
		{"every key", `{
			"allowNonWorkspaceAccess": true,
			"permissions": {"allow": ["command(git status)"], "deny": ["command(rm)"]},
			"network": "allowlist",
			"network_in_plan_mode": false,
			"networkAllowHosts": ["example.com"],
			"trustedWorkspaces": ["/srv/notes"],
			"remote_default_mode": "plan",
			"remote_max_mode": "auto"
		}`, Layer{
			AllowNonWorkspaceAccess: ptr(true),
			Permissions:             Rules{Allow: []string{"command(git status)"}, Deny: []string{"command(rm)"}},
			Network:                 ptr(NetworkAllowlist),
			NetworkInPlanMode:       ptr(false),
			NetworkAllowHosts:       []string{"example.com"},
			TrustedWorkspaces:       []string{"/srv/notes"},
			RemoteDefaultMode:       ptr(ModePlan),
			RemoteMaxMode:           ptr(ModeAuto),
		}, ""},
		{"unknown keys are ignored", `{"theme": "dark", "model": {"name": "x"}}`, Layer{}, ""},
		{"false is set, not unset", `{"allowNonWorkspaceAccess": false}`, Layer{AllowNonWorkspaceAccess: ptr(false)}, ""},
		{"not json", `{"network": `, Layer{}, "permission: parse settings"},
		{"not an object", `[]`, Layer{}, "cannot unmarshal"},
		{"wrong type", `{"network": 5}`, Layer{}, "cannot unmarshal"},
		{"wrong list type", `{"permissions": {"deny": "command(rm)"}}`, Layer{}, "cannot unmarshal"},
		{"unknown network policy", `{"network": "open"}`, Layer{}, `network "open"`},
		{"unknown remote mode", `{"remote_default_mode": "yolo"}`, Layer{}, `remote_default_mode "yolo"`},
		{"unknown remote ceiling", `{"remote_max_mode": "Auto"}`, Layer{}, `remote_max_mode "Auto"`},
		{"bad allow rule", `{"permissions": {"allow": ["Bash(ls)"]}}`, Layer{}, `permissions.allow "Bash(ls)"`},
		{"bad deny rule", `{"permissions": {"deny": ["command(rm *)"]}}`, Layer{}, `permissions.deny "command(rm *)"`},
		{"bad host", `{"networkAllowHosts": ["*.example.com"]}`, Layer{}, `networkAllowHosts "*.example.com"`},
		{"relative trusted workspace", `{"trustedWorkspaces": ["notes"]}`, Layer{}, `trustedWorkspaces "notes"`},
		{"every problem is reported", `{"network": "x", "networkAllowHosts": ["a b"]}`, Layer{}, `network "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLayer([]byte(tt.json))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("got %v, want an error holding %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want no error", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	t.Run("validation errors match ErrInvalidPolicy", func(t *testing.T) {
		_, err := ParseLayer([]byte(`{"network": "x", "networkAllowHosts": ["a b"]}`))
		if !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("got %v, want an error matching ErrInvalidPolicy", err)
		}
		var pe *PolicyError
		if !errors.As(err, &pe) || pe.Field != "network" {
			t.Errorf("got %v, want a *PolicyError for network first", err)
		}
		if !strings.Contains(err.Error(), `networkAllowHosts "a b"`) {
			t.Errorf("got %v, want both problems reported", err)
		}
	})
}

// TestMerge defines, field by field, how the three layers combine.
func TestMerge(t *testing.T) {
	t.Parallel()
	config := Layer{
		AllowNonWorkspaceAccess: ptr(true),
		Permissions:             Rules{Allow: []string{"command(git status)", "command(ls)"}, Deny: []string{"command(rm)"}},
		Network:                 ptr(NetworkAllowlist),
		NetworkAllowHosts:       []string{"example.com"},
		TrustedWorkspaces:       []string{"/srv/a"},
		RemoteDefaultMode:       ptr(ModeAcceptEdits),
	}
	file := Layer{
		Permissions:       Rules{Allow: []string{"command(ls)", "command(head)"}, Deny: []string{"command(git push)"}},
		NetworkInPlanMode: ptr(false),
		NetworkAllowHosts: []string{"python.org", "example.com"},
		RemoteMaxMode:     ptr(ModeAuto),
	}
	session := Layer{
		AllowNonWorkspaceAccess: ptr(false),
		Network:                 ptr(NetworkDeny),
		Permissions:             Rules{Deny: []string{"command(rm)", "command(curl)"}},
		TrustedWorkspaces:       []string{"/srv/b"},
	}
	got := Merge(config, file, session)
	tests := []struct {
		field     string
		got, want any
	}{
		{"allowNonWorkspaceAccess: the session's false beats the config's true", got.AllowNonWorkspaceAccess, false},
		{"permissions.allow: the union, first appearance first", got.Allow, []string{"command(git status)", "command(ls)", "command(head)"}},
		{"permissions.deny: the union; an override cannot drop one", got.Deny, []string{"command(rm)", "command(git push)", "command(curl)"}},
		{"network: the session's deny beats the config's allowlist", got.Network, NetworkDeny},
		{"network_in_plan_mode: the file's false, unset above it", got.NetworkInPlanMode, false},
		{"networkAllowHosts: the union", got.NetworkAllowHosts, []string{"example.com", "python.org"}},
		{"trustedWorkspaces: the union", got.TrustedWorkspaces, []string{"/srv/a", "/srv/b"}},
		{"remote_default_mode: the config's, unset above it", got.Remote.DefaultMode, ModeAcceptEdits},
		{"remote_max_mode: the file's", got.Remote.MaxMode, ModeAuto},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
	t.Run("defaults", func(t *testing.T) {
		want := Settings{Network: NetworkAllow, NetworkInPlanMode: true}
		if got := Merge(); !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
		if got := Merge(Layer{}, Layer{}, Layer{}); !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})
	t.Run("lowest first: the later layer wins a scalar", func(t *testing.T) {
		a, b := Layer{Network: ptr(NetworkDeny)}, Layer{Network: ptr(NetworkAllow)}
		if got := Merge(a, b).Network; got != NetworkAllow {
			t.Errorf("got %v, want %v", got, NetworkAllow)
		}
		if got := Merge(b, a).Network; got != NetworkDeny {
			t.Errorf("got %v, want %v", got, NetworkDeny)
		}
	})
	t.Run("the layers are not modified", func(t *testing.T) {
		if len(config.Permissions.Allow) != 2 || len(file.NetworkAllowHosts) != 2 {
			t.Errorf("got config %+v and file %+v changed by Merge", config, file)
		}
	})
}

func TestReadLayerFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t.Run("missing file is an empty layer", func(t *testing.T) {
		got, err := ReadLayerFile(SettingsPath(filepath.Join(dir, "nowhere")))
		if err != nil || !reflect.DeepEqual(got, Layer{}) {
			t.Errorf("got %+v, %v, want an empty layer", got, err)
		}
	})
	t.Run("a file is read", func(t *testing.T) {
		p := filepath.Join(dir, "ok.json")
		if err := os.WriteFile(p, []byte(`{"network":"deny"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadLayerFile(p)
		if err != nil || got.Network == nil || *got.Network != NetworkDeny {
			t.Errorf("got %+v, %v, want network deny", got, err)
		}
	})
	t.Run("a bad file is an error naming it", func(t *testing.T) {
		p := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(p, []byte(`{"network":"open"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadLayerFile(p)
		if err == nil || !strings.Contains(err.Error(), p) || !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("got %v, want an invalid-policy error naming %s", err, p)
		}
	})
	t.Run("a directory is an error", func(t *testing.T) {
		_, err := ReadLayerFile(dir)
		if err == nil || !strings.HasPrefix(err.Error(), "permission: read settings") {
			t.Errorf("got %v, want a read error", err)
		}
	})
}

func TestLoadEffectiveSettings(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	if err := os.WriteFile(SettingsPath(dataDir), []byte(`{"network":"allowlist","networkAllowHosts":["b.com"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	config := Layer{NetworkAllowHosts: []string{"a.com"}, Permissions: Rules{Deny: []string{"command(rm)"}}}
	t.Run("three layers", func(t *testing.T) {
		got, err := LoadEffectiveSettings(config, SettingsPath(dataDir), Agent{SettingsOverride: &Layer{Network: ptr(NetworkDeny)}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Network != NetworkDeny || !reflect.DeepEqual(got.NetworkAllowHosts, []string{"a.com", "b.com"}) || !reflect.DeepEqual(got.Deny, []string{"command(rm)"}) {
			t.Errorf("got %+v, want deny, hosts a.com and b.com, deny command(rm)", got)
		}
	})
	t.Run("no override", func(t *testing.T) {
		got, err := LoadEffectiveSettings(config, SettingsPath(dataDir), Agent{})
		if err != nil || got.Network != NetworkAllowlist {
			t.Errorf("got %+v, %v, want allowlist from the file", got, err)
		}
	})
	tests := []struct {
		name    string
		config  Layer
		agent   Agent
		wantErr string
	}{
		{"bad config", Layer{Network: ptr(NetworkPolicy("x"))}, Agent{}, "permission: config: "},
		{"bad override", Layer{}, Agent{SettingsOverride: &Layer{Permissions: Rules{Deny: []string{"rm"}}}}, "permission: session settingsOverride: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadEffectiveSettings(tt.config, SettingsPath(dataDir), tt.agent)
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidPolicy) {
				t.Errorf("got %v, want an invalid-policy error starting %q", err, tt.wantErr)
			}
		})
	}
}

// FuzzParseLayer: ParseLayer never panics; what it accepts is valid and survives a JSON
// round trip; and no settings make a write in plan mode anything but a block.
func FuzzParseLayer(f *testing.F) {
	for _, s := range []string{"", "{}", "null", `{"network":"deny"}`, `{"permissions":{"allow":["command(ls)"]}}`,
		`{"networkAllowHosts":["example.com"],"network":"allowlist"}`, `{"network":5}`, `[`, `{"remote_max_mode":"auto"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLayer(data)
		if err != nil {
			return
		}
		if err := l.Validate(); err != nil {
			t.Fatalf("accepted %q but it does not validate: %v", data, err)
		}
		out, err := json.Marshal(l)
		if err != nil {
			t.Fatalf("marshal %+v: %v", l, err)
		}
		back, err := ParseLayer(out)
		if err != nil || !reflect.DeepEqual(Merge(back), Merge(l)) {
			t.Errorf("round trip of %q: got %+v, %v, want %+v", data, back, err, l)
		}
		s := Merge(l)
		d := Evaluate(Call{Tool: "w", Effects: []Effect{EffectFSWrite}}, Agent{ExecutionMode: ModePlan}, s)
		if d.Verdict != VerdictBlock {
			t.Errorf("settings %q: a write in plan mode got %v, want block", data, d)
		}
	})
}
