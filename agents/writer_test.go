package agents

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A rendered draft parses back to the same agent.
func TestDraftRenderParsesBack(t *testing.T) {
	t.Parallel()
	d := Draft{ID: "travel-planner", Handle: "travel", Name: "Travel: planner", Tools: []string{"web.fetch", "conversation.ask"},
		Roles: []string{"maker"}, Skills: []string{"house"}, Language: "pt-BR", TurnBudget: 20, IdleRollover: 90 * time.Minute,
		Default: true, Persona: "You plan trips.\n\n---\n\nNever book."}
	a, err := Check("x.md", d.Render())
	if err != nil {
		t.Fatalf("%v\n%s", err, d.Render())
	}
	back := DraftOf(a, true)
	d.Handle = "@travel"
	if !reflect.DeepEqual(back, d) {
		t.Fatalf("got %+v\nwant %+v", back, d)
	}
	if _, err := Check("x.md", Draft{ID: "x", Handle: "@x", Name: "X", Persona: "p"}.Render()); err != nil {
		t.Fatalf("an empty grant: %v", err)
	}
}

// Try loads the catalogue as a change would leave it and writes nothing; Apply writes it,
// Undo puts back what was there, and neither reaches outside the owner's directories.
func TestTryApplyUndo(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.example(t, "agents/concierge.md", agentFile("concierge", "@buddi"))
	old := b.owner(t, "dev.md", agentFile("developer", "@dev"))
	b.owner(t, "developer/skills/loop.md", "Read, edit, run.\n")
	cfg := b.config()
	newFile := filepath.Join(b.agentsDir, "scout.md")
	ch := Change{Writes: map[string][]byte{newFile: []byte(agentFile("scout", "@scout")),
		filepath.Join(b.skillsDir, "house.md"): []byte("Be brief.\n")}, Removes: []string{old, filepath.Join(b.agentsDir, "developer")}}
	c, err := Try(cfg, ch)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(c.All()); !reflect.DeepEqual(got, []string{"concierge", "scout"}) {
		t.Fatalf("tried catalogue: %v", got)
	}
	if _, err := os.Stat(newFile); err == nil {
		t.Fatal("Try wrote")
	}
	// A change that breaks the load is the load's error.
	bad := Change{Writes: map[string][]byte{filepath.Join(b.agentsDir, "x.md"): []byte(agentFile("x", "@dev"))}}
	if _, err := Try(cfg, bad); err == nil || !strings.Contains(err.Error(), "handle @dev") {
		t.Fatalf("a clash: %v", err)
	}
	for _, p := range []string{filepath.Join(b.examples, "agents", "concierge.md"), "/etc/passwd", filepath.Join(b.agentsDir, "..", "x.md")} {
		if _, err := Try(cfg, Change{Writes: map[string][]byte{p: []byte("x")}}); err == nil {
			t.Errorf("Try took %s", p)
		}
		if _, err := Apply(cfg, Change{Writes: map[string][]byte{p: []byte("x")}}); err == nil {
			t.Errorf("Apply took %s", p)
		}
	}

	applied, err := Apply(cfg, ch)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(b.load(t).All()); !reflect.DeepEqual(got, []string{"concierge", "scout"}) {
		t.Fatalf("applied: %v", got)
	}
	if err := applied.Undo(); err != nil {
		t.Fatal(err)
	}
	c = b.load(t)
	if got := ids(c.All()); !reflect.DeepEqual(got, []string{"concierge", "developer"}) {
		t.Fatalf("undone: %v", got)
	}
	if dev, _ := c.ByID("developer"); len(dev.Loaded) != 1 {
		t.Fatalf("the private skill did not come back: %v", skillNames(dev.Loaded))
	}
	if _, err := os.Stat(filepath.Join(b.skillsDir)); err == nil {
		t.Error("the skills directory Apply made is still there after Undo")
	}
}

// No delegates.json may name an agent holding the platform write tools: a load problem
// naming the file, the owner's or an example's.
func TestDelegatesNamingAnAgentMakerFailsTheLoad(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.example(t, "agents/concierge.md", agentFile("concierge", "@buddi", "roles: [front-desk]"))
	b.example(t, "agents/concierge/delegates.json", `["@father"]`)
	b.owner(t, "father.md", agentFile("father", "@father", "roles: [maker]", "tools: [platform.create_agent]"))
	b.owner(t, "dev.md", agentFile("developer", "@dev"))
	file := b.owner(t, "developer/delegates.json", `["concierge", "father"]`)
	ps := b.loadErr(t)
	if len(ps) != 2 || !hasProblem(ps, file, "names @father, which holds the platform write tools") ||
		!hasProblem(ps, filepath.Join(b.examples, "agents", "concierge", DelegatesFile), "names @father") {
		t.Fatalf("problems: %v", ps)
	}
	// "*" is everyone but the maker: no problem.
	b.owner(t, "developer/delegates.json", `["*"]`)
	b.owner(t, "concierge/delegates.json", `["developer"]`)
	b.owner(t, "concierge.md", agentFile("concierge", "@buddi", "roles: [front-desk]"))
	b.load(t)
}
