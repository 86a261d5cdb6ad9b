package permission

import (
	"reflect"
	"testing"
)

func TestRank(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode Mode
		want int
	}{
		{ModePlan, 0}, {ModeAcceptEdits, 1}, {ModeAuto, 2},
		{"", 0}, {"interactive", 0}, {"AUTO", 0}, {"auto ", 0},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			if got := Rank(tt.mode); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClampMode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		mode, max Mode
		want      Mode
	}{
		{"no ceiling", ModeAuto, "", ModeAuto},
		{"no ceiling, harness mode", "interactive", "", "interactive"},
		{"below the ceiling", ModePlan, ModeAuto, ModePlan},
		{"at the ceiling", ModeAcceptEdits, ModeAcceptEdits, ModeAcceptEdits},
		{"above the ceiling", ModeAuto, ModeAcceptEdits, ModeAcceptEdits},
		{"far above the ceiling", ModeAuto, ModePlan, ModePlan},
		{"above an unknown ceiling", ModeAcceptEdits, "bogus", ModePlan},
		{"harness mode under a ceiling", "interactive", ModePlan, "interactive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Agent{ExecutionMode: tt.mode, MaxExecutionMode: tt.max, WorkspacePaths: []string{"/w"}}
			got := ClampMode(a)
			if got.ExecutionMode != tt.want {
				t.Errorf("got %q, want %q", got.ExecutionMode, tt.want)
			}
			if got.MaxExecutionMode != tt.max || !reflect.DeepEqual(got.WorkspacePaths, a.WorkspacePaths) {
				t.Errorf("got %+v, want only ExecutionMode changed", got)
			}
		})
	}
}

func TestRemoteMode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		remote    Remote
		requested Mode
		want      Mode
	}{
		{"defaults: nothing asked", Remote{}, "", ModeAcceptEdits},
		{"defaults: tighten to plan", Remote{}, ModePlan, ModePlan},
		{"defaults: accept-edits", Remote{}, ModeAcceptEdits, ModeAcceptEdits},
		{"defaults: auto is lowered", Remote{}, ModeAuto, ModeAcceptEdits},
		{"defaults: unknown gets the default", Remote{}, "yolo", ModeAcceptEdits},
		{"the ceiling defaults to the default", Remote{DefaultMode: ModePlan}, ModeAuto, ModePlan},
		{"a raised ceiling", Remote{DefaultMode: ModeAcceptEdits, MaxMode: ModeAuto}, ModeAuto, ModeAuto},
		{"a raised ceiling, nothing asked", Remote{DefaultMode: ModeAcceptEdits, MaxMode: ModeAuto}, "", ModeAcceptEdits},
		{"a default above the ceiling is lowered", Remote{DefaultMode: ModeAuto, MaxMode: ModePlan}, "", ModePlan},
		{"an unknown default is plan", Remote{DefaultMode: "bogus"}, "", ModePlan},
		{"an unknown default caps at plan", Remote{DefaultMode: "bogus"}, ModeAuto, ModePlan},
		{"an unknown ceiling is plan", Remote{DefaultMode: ModeAuto, MaxMode: "bogus"}, ModeAuto, ModePlan},
		{"the seed's config", Remote{DefaultMode: ModeAcceptEdits, MaxMode: ModeAcceptEdits}, ModeAuto, ModeAcceptEdits},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.remote.Mode(tt.requested); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestApplyRemoteMode(t *testing.T) {
	t.Parallel()
	raised := Remote{DefaultMode: ModeAcceptEdits, MaxMode: ModeAuto}
	tests := []struct {
		name      string
		harness   Mode
		requested Mode
		remote    Remote
		want      Mode
	}{
		{"no request keeps a harness default under the ceiling", ModePlan, "", Remote{}, ModePlan},
		{"no request lowers a harness default to the ceiling", ModeAuto, "", Remote{}, ModeAcceptEdits},
		{"no request leaves a mode that is not a permission mode", "interactive", "", Remote{}, "interactive"},
		{"no request leaves no mode", "", "", Remote{}, ""},
		{"a request replaces the harness default", ModePlan, ModeAcceptEdits, Remote{}, ModeAcceptEdits},
		{"a request above the ceiling is lowered", ModePlan, ModeAuto, Remote{}, ModeAcceptEdits},
		{"a request under a raised ceiling", ModePlan, ModeAuto, raised, ModeAuto},
		{"an unknown request gets the remote default", "interactive", "root", raised, ModeAcceptEdits},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ApplyRemoteMode(Agent{ExecutionMode: tt.harness}, tt.requested, tt.remote)
			if got.ExecutionMode != tt.want {
				t.Errorf("got %q, want %q", got.ExecutionMode, tt.want)
			}
		})
	}
}

func TestSanitizeRemoteAgent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		agent map[string]any
		want  map[string]any
	}{
		{"strips every lifting key", map[string]any{
			"name": "scout", "model": map[string]any{"id": "m"},
			"dangerouslySkipPermissions": true, "settingsOverride": map[string]any{"network": "allow"},
			"paths": []any{"/"}, "workspacePaths": []any{"/"}, "trustedWorkspaces": []any{"/"},
			"allowNonWorkspaceAccess": true, "executionMode": "plan",
		}, map[string]any{"name": "scout", "model": map[string]any{"id": "m"}, "executionMode": "plan"}},
		{"strips other spellings, as encoding/json would read them", map[string]any{
			"DangerouslySkipPermissions": true, "SETTINGSOVERRIDE": map[string]any{}, "WorkSpacePaths": []any{"/"},
			"dangerouslyS\u212aipPermissions": true,
		}, map[string]any{"executionMode": "accept-edits"}},
		{"limits the mode", map[string]any{"executionMode": "auto"}, map[string]any{"executionMode": "accept-edits"}},
		{"an unknown mode gets the default", map[string]any{"executionMode": "yolo"}, map[string]any{"executionMode": "accept-edits"}},
		{"a mode that is not a string gets the default", map[string]any{"executionMode": 2}, map[string]any{"executionMode": "accept-edits"}},
		{"other spellings of the mode are replaced", map[string]any{"executionMode": "plan", "ExecutionMode": "auto"}, map[string]any{"executionMode": "plan"}},
		{"only another spelling: the default", map[string]any{"EXECUTIONMODE": "auto"}, map[string]any{"executionMode": "accept-edits"}},
		{"no mode: the default", map[string]any{}, map[string]any{"executionMode": "accept-edits"}},
		{"nil map", nil, map[string]any{"executionMode": "accept-edits"}},
		{"the ceiling key is kept", map[string]any{"maxExecutionMode": "plan"}, map[string]any{"maxExecutionMode": "plan", "executionMode": "accept-edits"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(tt.agent)
			got := SanitizeRemoteAgent(tt.agent, Remote{})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if len(tt.agent) != before {
				t.Errorf("got the input changed to %v, want it untouched", tt.agent)
			}
		})
	}
}
