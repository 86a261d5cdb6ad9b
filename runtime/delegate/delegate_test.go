package delegate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"buddi/agents"
	"buddi/plugins"
	"buddi/runtime/run"
)

// bound is agent.delegate bound to a catalogue of three agents in temp directories (no
// database: every call here is refused before anything starts).
func bound(t *testing.T) (plugins.Tool, string) {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	agent := func(id, handle, extra string) string {
		return "---\nid: " + id + "\nhandle: \"" + handle + "\"\nname: " + id + "\n" + extra + "---\nYou are " + id + ".\n"
	}
	write("desk.md", agent("concierge", "@buddi", "roles: [front-desk]\n"))
	write("dev.md", agent("developer", "@dev", ""))
	write("ledger.md", agent("ledger", "@ledger", ""))
	cfg := agents.Config{AgentsDir: dir}
	ms := []plugins.Manifest{Manifest()}
	if !Bind(ms, Deps{Runner: &run.Runner{Catalog: func() (*agents.Catalog, error) { return agents.Load(cfg) }}, Agents: cfg}) {
		t.Fatal("Bind found no agent.delegate")
	}
	return ms[0].Tools[0], dir
}

func call(agent, to string, depth int) plugins.Call {
	args, _ := json.Marshal(map[string]string{"agent": to, "question": "How are the books?"})
	return plugins.Call{Tool: Tool, Agent: agent, Args: args, DelegationDepth: depth}
}

func TestRefusals(t *testing.T) {
	tool, dir := bound(t)
	for _, tc := range []struct {
		name string
		call plugins.Call
		want string
	}{
		{"no list", call("developer", "@ledger", 0), "Refused: @dev may delegate to nobody; @ledger is not on its list. The owner adds it on @dev's Team tab, or in " +
			filepath.Join(dir, "developer", agents.DelegatesFile)},
		{"too deep", call("concierge", "@dev", MaxDepth), "Refused: this is already a delegation 3 deep (@buddi), and buddi hands work on at most 3 deep"},
		{"itself", call("concierge", "concierge", 0), "Refused: @buddi cannot delegate to itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tool.Execute(t.Context(), tc.call, nil)
			if err != nil || !res.IsError || !strings.HasPrefix(res.Text, tc.want) {
				t.Fatalf("got %+v, %v; want a refusal starting %q", res, err, tc.want)
			}
		})
	}
	// Unbound (outside buddi serve), a call says delegation is not available.
	res, err := Manifest().Tools[0].Execute(t.Context(), call("concierge", "@dev", 0), nil)
	if err != nil || !res.IsError || !strings.Contains(res.Text, "not available") {
		t.Fatalf("unbound: %+v, %v", res, err)
	}
}
