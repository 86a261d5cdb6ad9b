package agents

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"buddi/examples"
)

// TestShippedExamplesLoad loads the examples the repository ships, embedded as a built binary
// has them and from disk as a clone has them, and checks what the product relies on.
func TestShippedExamplesLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		cfg        Config
		pathPrefix string
	}{
		{"clone", Config{Examples: os.DirFS("../examples"), ExamplesPath: "../examples"}, "../examples/agents/"},
		{"embedded", Config{Examples: examples.FS}, "examples/agents/"},
	}
	for _, tt := range tests {
		cfg := tt.cfg
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Load(cfg)
			if err != nil {
				t.Fatalf("the shipped examples do not load:\n%v", err)
			}
			d, err := c.Default()
			if err != nil || d.ID != "concierge" || d.Source != SourceExample {
				t.Fatalf("default: got %q, %v; want concierge", d.ID, err)
			}
			for _, role := range []string{"front-desk", "overview", "recap"} {
				if a, err := c.ForRole(role); err != nil || a.ID != "concierge" {
					t.Errorf("ForRole(%q): got %q, %v", role, a.ID, err)
				}
			}
			if !reflect.DeepEqual(d.Tools, []string{"conversation.ask", "conversation.offer", "agent.delegate"}) {
				t.Errorf("the concierge's grant should be the question tools and agent.delegate alone, got %v", d.Tools)
			}
			if maker, err := c.ForRole(RoleMaker); err != nil || maker.ID != "agent-father" || !maker.HoldsPlatformWrites() {
				t.Errorf("the maker: got %q, %v; want the agent-father holding the platform write tools", maker.ID, err)
			}
			dev, ok := c.ByHandle("@dev")
			if !ok {
				t.Fatal("no @dev")
			}
			want := []string{"workspace", "read", "list", "search", "write", "edit", "run", "start", "output", "stop", "git", "screenshot", "preview", "summarise"}
			for i := range want {
				want[i] = "developer." + want[i]
			}
			want = append(want, "conversation.ask", "conversation.offer")
			if !reflect.DeepEqual(dev.Tools, want) {
				t.Errorf("@dev's grant: got %v, want %v", dev.Tools, want)
			}
			for _, a := range c.All() {
				if a.Persona == "" || !strings.HasPrefix(a.Path, tt.pathPrefix) {
					t.Errorf("%s: path %q, persona %d bytes", a.ID, a.Path, len(a.Persona))
				}
				if !hasSkill(a.Loaded, "writing-to-the-owner") || !hasSkill(a.Loaded, "untrusted-content") {
					t.Errorf("%s does not get the house rules: %v", a.ID, skillNames(a.Loaded))
				}
			}
			if !hasSkill(dev.Loaded, "workspace-loop") || hasSkill(d.Loaded, "workspace-loop") {
				t.Errorf("the developer's private skill: dev %v, concierge %v", skillNames(dev.Loaded), skillNames(d.Loaded))
			}
		})
	}
}

func hasSkill(ss []Skill, name string) bool {
	for _, s := range ss {
		if s.Name == name {
			return true
		}
	}
	return false
}
