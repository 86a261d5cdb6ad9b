package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"buddi/core/permission"
	"buddi/plugins"
	"buddi/plugins/developer"
)

func TestOwnerPolicyReadsSettingsEveryCall(t *testing.T) {
	home := t.TempDir()
	policy := ownerPolicy(home, nil, nil)
	fetch := permission.Call{Tool: "web.fetch", Effects: []permission.Effect{permission.EffectNetRead}, Args: map[string]any{"url": "https://example.com/"}}

	agent, s, err := policy(context.Background(), plugins.Call{})
	if err != nil {
		t.Fatalf("no settings.json: %v", err)
	}
	if d := permission.Evaluate(fetch, agent, s); d.Verdict != permission.VerdictAllow {
		t.Errorf("default policy: %v, want allow", d)
	}

	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"network":"deny"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	agent, s, err = policy(context.Background(), plugins.Call{})
	if err != nil {
		t.Fatal(err)
	}
	if d := permission.Evaluate(fetch, agent, s); d.Verdict != permission.VerdictBlock {
		t.Errorf("after network deny: %v, want block", d)
	}

	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"network":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := policy(context.Background(), plugins.Call{}); err == nil {
		t.Error("an unreadable settings.json gave a policy; it must refuse")
	}
}

type oneWorkspace string

func (d oneWorkspace) Workspace(_ context.Context, agent string) (developer.Workspace, bool, error) {
	if agent != "dev" {
		return developer.Workspace{}, false, nil
	}
	return developer.Workspace{Agent: agent, Directory: string(d)}, true, nil
}

// The agent's workspace is the boundary the engine checks a tool's paths against.
func TestOwnerPolicyUsesTheAgentsWorkspace(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	policy := ownerPolicy(home, oneWorkspace(ws), nil)
	edit := func(p string) permission.Call {
		return permission.Call{Tool: "developer.write", Effects: []permission.Effect{permission.EffectFSWrite}, Edit: true, Paths: []string{p}}
	}
	agent, s, err := policy(context.Background(), plugins.Call{Agent: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	if d := permission.Evaluate(edit(filepath.Join(ws, "main.go")), agent, s); d.Verdict != permission.VerdictAllow {
		t.Errorf("inside the workspace: %v, want allow", d)
	}
	if d := permission.Evaluate(edit(filepath.Join(home, "x")), agent, s); d.Verdict != permission.VerdictBlock {
		t.Errorf("outside the workspace: %v, want block", d)
	}
	other, s, _ := policy(context.Background(), plugins.Call{Agent: "concierge"})
	if d := permission.Evaluate(edit(filepath.Join(ws, "main.go")), other, s); d.Verdict != permission.VerdictBlock {
		t.Errorf("an agent without a workspace: %v, want block", d)
	}
}
