package gateway

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"buddi/core/permission"
	"buddi/plugins"
)

func TestOwnerPolicyReadsSettingsEveryCall(t *testing.T) {
	home := t.TempDir()
	policy := ownerPolicy(home)
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
