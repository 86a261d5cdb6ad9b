package app

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"buddi/agents"
)

// The system prompt names whom an agent may hand a question to, from the same delegates.json
// the tool reads: the front desk with no file asks everyone; an agent with a file asks its
// list; one with the tool and no list is told it asks nobody, and where the owner adds some;
// one without the tool is told nothing.
func TestColleaguesParagraph(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
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
	write("desk.md", agent("concierge", "@buddi", "roles: [front-desk]\ntools: [agent.delegate]\n"))
	write("dev.md", agent("developer", "@dev", "tools: [agent.delegate]\n"))
	write("ledger.md", agent("ledger", "@ledger", "tools: [agent.delegate]\n"))
	write("quiet.md", agent("quiet", "@quiet", ""))
	write(filepath.Join("ledger", agents.DelegatesFile), `["@dev"]`)
	cfg := agents.Config{AgentsDir: dir}
	catalog := func() (*agents.Catalog, error) { return agents.Load(cfg) }
	cat, err := catalog()
	if err != nil {
		t.Fatal(err)
	}
	say := colleagues(cfg, catalog, slog.New(slog.DiscardHandler))
	of := func(id string) string {
		a, ok := cat.ByID(id)
		if !ok {
			t.Fatalf("no agent %s", id)
		}
		return say(a)
	}
	if got := of("concierge"); !strings.Contains(got, "@dev (developer, id developer)") || !strings.Contains(got, "@ledger") || strings.Contains(got, "@buddi") {
		t.Errorf("the front desk: %q", got)
	}
	if got := of("ledger"); !strings.Contains(got, "@dev") || strings.Contains(got, "@quiet") || strings.Contains(got, "@buddi") {
		t.Errorf("ledger with its list: %q", got)
	}
	if got := of("developer"); !strings.Contains(got, "no colleague") || !strings.Contains(got, filepath.Join(dir, "developer", agents.DelegatesFile)) {
		t.Errorf("an agent with no list: %q", got)
	}
	if got := of("quiet"); got != "" {
		t.Errorf("an agent without agent.delegate is told %q", got)
	}
}
