package agents

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	t.Parallel()

	t.Run("AgentsListsChooseWhoGetsASharedSkill", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.example(t, "agents/a.md", agentFile("a", "@a"))
		b.example(t, "agents/b.md", agentFile("b", "@bee"))
		b.example(t, "agents/c.md", agentFile("c", "@c", "skills: [library, only-a]"))
		b.example(t, "skills/everyone.md", skillFile("description: A house rule."))
		b.example(t, "skills/only-a.md", skillFile("agents: [a]"))
		b.example(t, "skills/by-handle.md", skillFile(`agents: ["@bee"]`))
		b.example(t, "skills/library.md", skillFile("agents: []"))
		c := b.load(t)
		want := map[string][]string{
			"a": {"everyone:example", "only-a:example"},
			"b": {"by-handle:example", "everyone:example"},
			"c": {"everyone:example", "library:example", "only-a:example"},
		}
		for id, w := range want {
			a, _ := c.ByID(id)
			if got := skillNames(a.Loaded); !reflect.DeepEqual(got, w) {
				t.Errorf("%s: got %v, want %v", id, got, w)
			}
		}
	})

	t.Run("AgentsListNamingNoAgentFails", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.example(t, "agents/a.md", agentFile("a", "@a"))
		p := b.example(t, "skills/s.md", skillFile("agents: [a, ghost]"))
		if ps := b.loadErr(t); !hasProblem(ps, p, "agents: names ghost", "no agent has that id or handle") {
			t.Errorf("got %v", ps)
		}
	})

	t.Run("DefaultExampleWhenOwnerHasNone", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.example(t, "agents/a.md", agentFile("a", "@a", "default: true"))
		b.owner(t, "b.md", agentFile("b", "@b"))
		c := b.load(t)
		if d, err := c.Default(); err != nil || d.ID != "a" {
			t.Errorf("got %v, %v; want a", d.ID, err)
		}
	})

	t.Run("DefaultGoneWhenOwnerReplacesTheExampleWithoutOne", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.example(t, "agents/a.md", agentFile("a", "@a", "default: true"))
		b.owner(t, "a.md", agentFile("a", "@a"))
		c := b.load(t)
		_, err := c.Default()
		var nd *NoDefaultError
		if !errors.As(err, &nd) {
			t.Fatalf("got %v, want a *NoDefaultError", err)
		}
		if nd.FixLine() != "default: true" || !strings.Contains(err.Error(), `"default: true"`) {
			t.Errorf("got %q", err)
		}
	})

	t.Run("DefaultOwnerBeatsExample", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.example(t, "agents/a.md", agentFile("a", "@a", "default: true"))
		b.owner(t, "b.md", agentFile("b", "@b", "default: true"))
		c := b.load(t)
		d, err := c.Default()
		if err != nil || d.ID != "b" || !d.Default {
			t.Fatalf("got %+v, %v; want b", d, err)
		}
		if a, _ := c.ByID("a"); a.Default {
			t.Errorf("the example still says it is the default")
		}
	})

	t.Run("DirectoriesMissingGiveAnEmptyCatalog", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.load(t)
		if len(c.All()) != 0 || len(c.Skills()) != 0 {
			t.Errorf("got %v", c.All())
		}
		zero, err := Load(Config{})
		if err != nil || len(zero.All()) != 0 {
			t.Errorf("zero Config: got %v, %v", zero, err)
		}
	})

	t.Run("DirectoryThatIsAFileFails", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		writeFile(t, b.agentsDir, "not a directory")
		if ps := b.loadErr(t); !hasProblem(ps, b.agentsDir, "cannot be read") {
			t.Errorf("got %v", ps)
		}
	})

	t.Run("DuplicateHandleAcrossHalvesFails", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ex := b.example(t, "agents/dev.md", agentFile("developer", "@dev"))
		own := b.owner(t, "coder.md", agentFile("coder", "@dev"))
		if ps := b.loadErr(t); !hasProblem(ps, own, "handle @dev is also the handle of "+ex, "set id: developer to replace that example") {
			t.Errorf("got %v", ps)
		}
	})

	t.Run("DuplicateHandlesInOneHalfFail", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first := b.owner(t, "a.md", agentFile("a", "@same"))
		second := b.owner(t, "b.md", agentFile("b", "@same"))
		if ps := b.loadErr(t); !hasProblem(ps, second, "handle @same is also declared by "+first) {
			t.Errorf("got %v", ps)
		}
	})

	t.Run("DuplicateIDsInOneHalfFail", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first := b.example(t, "agents/a.md", agentFile("same", "@a"))
		second := b.example(t, "agents/b.md", agentFile("same", "@b"))
		if ps := b.loadErr(t); !hasProblem(ps, second, "id same is also declared by "+first) {
			t.Errorf("got %v", ps)
		}
	})

	t.Run("EveryProblemIsListedWithItsFile", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		p1 := b.example(t, "agents/a.md", agentFile("a", "@a", "colour: red"))
		p2 := b.owner(t, "b.md", agentFile("b", "@b", "skills: [nope]"))
		p3 := b.ownerSkill(t, "s.md", skillFile("tools: [host.exec]"))
		_, err := Load(b.config())
		ps := wantLoadError(t, func() error { return err })
		if len(ps) != 3 {
			t.Fatalf("got %d problems, want 3: %v", len(ps), ps)
		}
		for _, p := range []string{p1, p2, p3} {
			if !strings.Contains(err.Error(), p+": ") {
				t.Errorf("the error does not name %s:\n%s", p, err)
			}
		}
		if !slices.IsSortedFunc(ps, func(x, y Problem) int { return strings.Compare(x.Path, y.Path) }) {
			t.Errorf("problems not in path order: %v", ps)
		}
		if !strings.HasPrefix(err.Error(), "agents: 3 problems") {
			t.Errorf("got %q", err)
		}
	})

	t.Run("ExamplePathsUseExamplesPath", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.example(t, "agents/a.md", agentFile("a", "@a"))
		cfg := b.config()
		cfg.ExamplesPath = ""
		c, err := Load(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if a, _ := c.ByID("a"); a.Path != filepath.Join("examples", "agents", "a.md") || a.Source != SourceExample {
			t.Errorf("got %q %q", a.Path, a.Source)
		}
	})

	t.Run("IgnoresHiddenAndOtherFiles", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.owner(t, "a.md", agentFile("a", "@a"))
		b.owner(t, ".a.md.swp", "junk")
		b.owner(t, ".draft.md", "junk")
		b.owner(t, "a/delegates.json", `["*"]`)
		b.owner(t, "notes.txt", "junk")
		c := b.load(t)
		if got := ids(c.All()); !reflect.DeepEqual(got, []string{"a"}) {
			t.Errorf("got %v", got)
		}
	})

	t.Run("KnownToolsChecksTheGrant", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		p := b.owner(t, "a.md", agentFile("a", "@a", "tools: [web.read, web.teleport]"))
		known := func(name string) bool { return name == "web.read" }
		cfg := b.config()
		cfg.KnownTools = known
		ps := wantLoadError(t, func() error { _, err := Load(cfg); return err })
		if len(ps) != 1 || !hasProblem(ps, p, "grants web.teleport, which no installed plugin provides") {
			t.Errorf("got %v", ps)
		}
		c := b.load(t) // nil KnownTools: the check is skipped
		ps = wantLoadError(t, func() error { return c.CheckTools(known) })
		if !hasProblem(ps, p, "web.teleport") {
			t.Errorf("CheckTools: got %v", ps)
		}
		if err := c.CheckTools(func(string) bool { return true }); err != nil {
			t.Errorf("CheckTools with every tool known: %v", err)
		}
		if ps := wantLoadError(t, func() error { return c.CheckTools(nil) }); len(ps) != 2 {
			t.Errorf("CheckTools(nil) must fail closed: got %v", ps)
		}
	})

	t.Run("OrphanPrivateSkillsFail", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.owner(t, "a.md", agentFile("a", "@a"))
		b.owner(t, "ghost/skills/x.md", skillFile("description: x"))
		if ps := b.loadErr(t); !hasProblem(ps, filepath.Join(b.agentsDir, "ghost", "skills"), "no agent file", "has id ghost") {
			t.Errorf("got %v", ps)
		}
	})

	t.Run("OwnerDirsReadsTheEnvironmentGiven", func(t *testing.T) {
		t.Parallel()
		env := map[string]string{}
		getenv := func(k string) string { return env[k] }
		a, s := OwnerDirs("/data", getenv)
		if a != filepath.Join("/data", "agents") || s != filepath.Join("/data", "skills") {
			t.Errorf("got %q %q", a, s)
		}
		env["BUDDI_AGENTS_DIR"], env["BUDDI_SKILLS_DIR"] = "/mine/agents", "/mine/skills"
		if a, s = OwnerDirs("/data", getenv); a != "/mine/agents" || s != "/mine/skills" {
			t.Errorf("got %q %q", a, s)
		}
	})

	t.Run("OwnerPrivateSkillsForAnExampleFail", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.example(t, "agents/a.md", agentFile("a", "@a"))
		b.owner(t, "a/skills/x.md", "x\n")
		if ps := b.loadErr(t); !hasProblem(ps, filepath.Join(b.agentsDir, "a", "skills"), "for a, whose file is an example", "copy that file into "+b.agentsDir) {
			t.Errorf("got %v", ps)
		}
	})

	t.Run("OwnerReplacesExampleWhole", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.example(t, "agents/a.md", agentFile("a", "@a", "roles: [recap]", "tools: [web.read]", "skills: [extra]", "turn_budget: 9", "language: de"))
		b.example(t, "agents/a/skills/mine.md", skillFile("description: the example's"))
		b.example(t, "skills/extra.md", skillFile("agents: []"))
		p := b.owner(t, "assistant.md", agentFile("a", "@helper"))
		c := b.load(t)
		a, ok := c.ByID("a")
		if !ok {
			t.Fatal("a is gone")
		}
		want := Agent{ID: "a", Handle: "@helper", Name: "a", Tools: []string{}, Roles: []string{}, Skills: []string{},
			Persona: "You are a.", Source: SourcePrivate, Path: p, Loaded: []Skill{}}
		if !reflect.DeepEqual(a, want) {
			t.Errorf("got %+v,\nwant %+v", a, want)
		}
		if _, ok := c.ByHandle("@a"); ok {
			t.Errorf("the example's handle still answers")
		}
	})

	t.Run("OwnerSkillReplacesExampleSkill", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.example(t, "agents/a.md", agentFile("a", "@a"))
		b.example(t, "agents/b.md", agentFile("b", "@b"))
		b.example(t, "skills/rule.md", skillFile("description: example", "agents: [a]"))
		p := b.ownerSkill(t, "rule.md", "Everyone follows this.\n")
		c := b.load(t)
		skills := c.Skills()
		if len(skills) != 1 || skills[0].Path != p || skills[0].Description != "" || !skills[0].Everyone {
			t.Fatalf("got %+v", skills)
		}
		for _, id := range []string{"a", "b"} {
			if a, _ := c.ByID(id); !reflect.DeepEqual(skillNames(a.Loaded), []string{"rule:private"}) {
				t.Errorf("%s: got %v", id, skillNames(a.Loaded))
			}
		}
	})

	t.Run("PrivateSkillsLoadForTheirAgentOnly", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.example(t, "agents/a.md", agentFile("a", "@a"))
		b.example(t, "agents/b.md", agentFile("b", "@b"))
		b.example(t, "agents/a/skills/loop.md", skillFile("description: a's loop"))
		b.example(t, "agents/a/skills/rule.md", "a's own rule\n")
		b.example(t, "skills/rule.md", "the house rule\n")
		b.owner(t, "c.md", agentFile("c", "@c", "skills: [tips]"))
		b.owner(t, "c/skills/tips.md", "c's tips\n")
		c := b.load(t)
		a, _ := c.ByID("a")
		if got := skillNames(a.Loaded); !reflect.DeepEqual(got, []string{"loop:example", "rule:example"}) {
			t.Errorf("a: got %v", got)
		}
		if a.Loaded[1].Body != "a's own rule" || a.Loaded[1].Agent != "a" {
			t.Errorf("the private rule does not shadow the shared one: %+v", a.Loaded[1])
		}
		bb, _ := c.ByID("b")
		if got := skillNames(bb.Loaded); !reflect.DeepEqual(got, []string{"rule:example"}) || bb.Loaded[0].Body != "the house rule" {
			t.Errorf("b: got %+v", bb.Loaded)
		}
		cc, _ := c.ByID("c")
		if got := skillNames(cc.Loaded); !reflect.DeepEqual(got, []string{"rule:example", "tips:private"}) {
			t.Errorf("c: got %v", got)
		}
	})

	t.Run("SkillWithToolsOrTierFails", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.example(t, "agents/a.md", agentFile("a", "@a"))
		shared := b.example(t, "skills/s.md", skillFile("tools: [host.exec]"))
		private := b.example(t, "agents/a/skills/p.md", skillFile("tier: auto"))
		ps := b.loadErr(t)
		if !hasProblem(ps, shared, "may not have a tools key") || !hasProblem(ps, private, "may not have a tier key") {
			t.Errorf("got %v", ps)
		}
	})

	t.Run("TwoDefaultsInOneDirectoryFail", func(t *testing.T) {
		t.Parallel()
		for _, owner := range []bool{false, true} {
			b := setup(t)
			write := b.example
			if owner {
				write = func(t *testing.T, rel, content string) string {
					return b.owner(t, strings.TrimPrefix(rel, "agents/"), content)
				}
			}
			first := write(t, "agents/a.md", agentFile("a", "@a", "default: true"))
			second := write(t, "agents/b.md", agentFile("b", "@b", "default: true"))
			if ps := b.loadErr(t); !hasProblem(ps, second, "default: true is also set by "+first) {
				t.Errorf("owner %v: got %v", owner, ps)
			}
		}
	})

	t.Run("UnknownSkillNameFails", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.example(t, "skills/real.md", "real\n")
		p := b.owner(t, "a.md", agentFile("a", "@a", "skills: [real, imagined]"))
		ps := b.loadErr(t)
		if len(ps) != 1 || !hasProblem(ps, p, "skills: names imagined", "no shared skill imagined.md") {
			t.Errorf("got %v", ps)
		}
	})

	t.Run("UnreadableAgentFileFails", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() == 0 {
			t.Skip("root reads every file")
		}
		b := setup(t)
		p := b.owner(t, "a.md", agentFile("a", "@a"))
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
		if ps := b.loadErr(t); !hasProblem(ps, p, "cannot be read") {
			t.Errorf("got %v", ps)
		}
	})
}
