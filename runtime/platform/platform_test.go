package platform

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"buddi/agents"
	"buddi/core/registry"
	"buddi/plugins"
	"buddi/plugins/host"
)

// testBundle is a search path in temp directories (shipped examples and the owner's half),
// the live catalogue over it, and the platform family bound to a registry of real tools.
type testBundle struct {
	examples, agentsDir, skillsDir string
	live                           *agents.Live
	tools                          map[string]*tool
	proposals                      []plugins.Manifest
}

const fatherFile = "---\nid: agent-father\nhandle: \"@father\"\nname: Agent father\nroles: [maker]\ntools: [platform.roster, platform.create_agent]\n---\nYou make agents.\n"

func setup(t *testing.T) *testBundle {
	t.Helper()
	root := t.TempDir()
	b := &testBundle{examples: filepath.Join(root, "examples"), agentsDir: filepath.Join(root, "owner", "agents"), skillsDir: filepath.Join(root, "owner", "skills")}
	write(t, filepath.Join(b.examples, "agents", "concierge.md"), "---\nid: concierge\nhandle: \"@buddi\"\nname: Concierge\nroles: [front-desk]\ndefault: true\ntools: [platform.roster]\n---\nYou keep the front desk.\n")
	write(t, filepath.Join(b.examples, "agents", "agent-father.md"), fatherFile)
	write(t, filepath.Join(b.examples, "skills", "house.md"), "---\ndescription: House rules.\n---\nBe brief.\n")
	write(t, filepath.Join(b.agentsDir, "scribe.md"), "---\nid: scribe\nhandle: \"@scribe\"\nname: Scribe\ntools: [platform.roster]\n---\nYou write things down.\n")

	m := Manifest()
	reg, err := registry.New(m, host.Manifest(host.Deps{}))
	if err != nil {
		t.Fatal(err)
	}
	cfg := agents.Config{Examples: os.DirFS(b.examples), ExamplesPath: b.examples, AgentsDir: b.agentsDir, SkillsDir: b.skillsDir,
		KnownTools: func(n string) bool { _, ok := reg.Lookup(n); return ok }}
	b.live = agents.NewLive(cfg, nil)
	t.Cleanup(func() { _ = b.live.Close() })
	if _, err := b.live.Load(); err != nil {
		t.Fatalf("the test's agents do not load: %v", err)
	}
	if !Bind([]plugins.Manifest{m}, Deps{Agents: cfg, Catalog: b.live.Load, Reload: b.live.Reload, Tools: reg,
		Plugins: func() []plugins.Manifest { return b.proposals }}) {
		t.Fatal("Bind found no platform tool")
	}
	b.tools = map[string]*tool{}
	for _, tl := range m.Tools {
		b.tools[tl.Spec().Name] = tl.(*tool)
	}
	return b
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (b *testBundle) call(t *testing.T, name string, args any) plugins.Call {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return plugins.Call{Tool: name, Args: raw, Agent: "agent-father", Now: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC), Granted: true}
}

// describe renders a write's envelope, failing the test on a refusal.
func (b *testBundle) describe(t *testing.T, name string, args any) plugins.Envelope {
	t.Helper()
	env, err := b.tools[name].Describe(context.Background(), b.call(t, name, args))
	if err != nil {
		t.Fatalf("%s refused: %v", name, err)
	}
	return env
}

// refused describes a write expecting a refusal that says every piece.
func (b *testBundle) refused(t *testing.T, name string, args any, pieces ...string) {
	t.Helper()
	_, err := b.tools[name].Describe(context.Background(), b.call(t, name, args))
	if err == nil {
		t.Fatalf("%s %v was not refused", name, args)
	}
	for _, p := range pieces {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s refusal %q does not say %q", name, err, p)
		}
	}
}

// approve runs a write as the executor does after the owner's approval: described, then
// executed with the envelope approved.
func (b *testBundle) approve(t *testing.T, name string, args any) plugins.Result {
	t.Helper()
	env := b.describe(t, name, args)
	res, err := b.tools[name].Execute(context.Background(), b.call(t, name, args), &env)
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %s", name, err, res.Text)
	}
	return res
}

func (b *testBundle) catalog(t *testing.T) *agents.Catalog {
	t.Helper()
	cat, err := b.live.Load()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// treeDigest is a digest of every file under dir, to show it was not written.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		h.Write([]byte(p + "\x00"))
		h.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

var scout = map[string]any{"id": "scout", "handle": "@scout", "name": "Scout", "tools": []string{"platform.roster", "host.exec"},
	"roles": []string{"researcher"}, "persona": "You find things out for the owner.\n\nBe careful."}

// Each rule refuses a create_agent in Describe, before any action exists.
func TestCreateAgentRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for key, val := range scout {
			m[key] = val
		}
		m[k] = v
		return m
	}
	b.refused(t, CreateAgent, with("id", "Scout Agent"), "not a valid id")
	b.refused(t, CreateAgent, with("handle", "@Sc out"), "not a valid handle")
	b.refused(t, CreateAgent, with("tools", []string{"mail.send"}), "grants mail.send, which no installed plugin provides")
	b.refused(t, CreateAgent, with("tools", []string{"platform.roster", "platform.create_agent"}), "platform.create_agent", "cannot be granted through themselves")
	b.refused(t, CreateAgent, with("tools", []string{"platform.accept_plugin_skill"}), "cannot be granted through themselves")
	b.refused(t, CreateAgent, with("id", "scribe"), "already an agent with id scribe")
	b.refused(t, CreateAgent, with("id", "concierge"), "already an agent with id concierge")
	b.refused(t, CreateAgent, with("handle", "@buddi"), "the handle @buddi is taken by Concierge")
	b.refused(t, CreateAgent, with("skills", []string{"no-such-skill"}), "no shared skill no-such-skill.md")
	if entries, _ := os.ReadDir(b.agentsDir); len(entries) != 1 {
		t.Fatalf("a refusal wrote something: %v", entries)
	}
}

// The envelope holds the complete resulting file and the resolved grant; approved, the file
// is in the owner's directory and the catalogue has the agent at once; the examples are
// untouched.
func TestCreateAgentWritesTheOwnersFile(t *testing.T) {
	t.Parallel()
	b := setup(t)
	before := treeDigest(t, b.examples)
	env := b.describe(t, CreateAgent, scout)
	path := filepath.Join(b.agentsDir, "scout.md")
	file := "---\nid: scout\nhandle: \"@scout\"\nname: Scout\ntools:\n    - platform.roster\n    - host.exec\nroles: [researcher]\n---\nYou find things out for the owner.\n\nBe careful.\n"
	if env.Detail["content"] != file {
		t.Fatalf("the envelope's file:\n%s\nwant:\n%s", env.Detail["content"], file)
	}
	for _, want := range []string{"The whole file, " + path + ":\n" + file, "Its grant (2 tools; 1 run without asking):", "platform.roster  auto", "host.exec        gated"} {
		if !strings.Contains(env.Preview, want) {
			t.Errorf("the preview does not show %q:\n%s", want, env.Preview)
		}
	}
	if env.Summary != "Create the agent @scout (Scout) with 2 tools" || !slices.Equal(env.Targets, []string{path}) ||
		len(env.Preconditions) != 1 || env.Preconditions[0].Value != "absent" {
		t.Errorf("envelope: %q %v %v", env.Summary, env.Targets, env.Preconditions)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("describing wrote the file")
	}

	b.catalog(t) // the live catalogue is parsed and held: the write must reach it without the watch
	res := b.approve(t, CreateAgent, scout)
	if !strings.Contains(res.Text, "Created @scout (Scout)") {
		t.Errorf("result: %q", res.Text)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != file {
		t.Fatalf("the written file: %v\n%s", err, got)
	}
	a, ok := b.catalog(t).ByHandle("@scout")
	if !ok || a.Source != agents.SourcePrivate || !slices.Equal(a.Tools, []string{"platform.roster", "host.exec"}) {
		t.Fatalf("the catalogue after the write: %+v, %v", a, ok)
	}
	if treeDigest(t, b.examples) != before {
		t.Error("the examples were written")
	}
	// Approved twice (a rerun): the agent exists, so it is refused before anything is written.
	env2, err := b.tools[CreateAgent].Describe(context.Background(), b.call(t, CreateAgent, scout))
	if err == nil {
		t.Fatalf("a second create was described: %v", env2.Summary)
	}
}

// An update shows the whole resulting file and lists what a widened grant adds; an example
// is changed by writing the owner's copy, never the example.
func TestUpdateAgentListsWhatTheGrantGains(t *testing.T) {
	t.Parallel()
	b := setup(t)
	before := treeDigest(t, b.examples)
	env := b.describe(t, UpdateAgent, map[string]any{"agent": "@scribe", "tools": []string{"platform.roster", "host.exec", "platform.tools"}})
	if env.Summary != "Change the agent @scribe (Scribe), widening its grant by 2 tools" {
		t.Errorf("summary %q", env.Summary)
	}
	if !strings.Contains(env.Preview, "Added to the grant: host.exec (gated), platform.tools (auto).") ||
		!strings.Contains(env.Preview, "tools:\n    - platform.roster\n    - host.exec\n    - platform.tools\n---\nYou write things down.\n") {
		t.Errorf("preview:\n%s", env.Preview)
	}
	b.refused(t, UpdateAgent, map[string]any{"agent": "@scribe", "tools": []string{"platform.update_agent"}}, "cannot be granted through themselves")
	b.refused(t, UpdateAgent, map[string]any{"agent": "@father", "name": "Father"}, "platform.create_agent", "cannot be granted through themselves")
	b.refused(t, UpdateAgent, map[string]any{"agent": "@scribe", "name": "Scribe"}, "nothing in @scribe's file would change")
	b.refused(t, UpdateAgent, map[string]any{"agent": "@scribe", "handle": "@buddi"}, "taken by Concierge")
	b.refused(t, UpdateAgent, map[string]any{"agent": "@nobody", "name": "X"}, "no agent @nobody")

	// Narrowing lists what is taken out.
	narrow := b.describe(t, UpdateAgent, map[string]any{"agent": "scribe", "tools": []string{}})
	if !strings.Contains(narrow.Preview, "Taken out of the grant: platform.roster (auto).") || strings.Contains(narrow.Preview, "Added") {
		t.Errorf("narrowing preview:\n%s", narrow.Preview)
	}

	// An example: the owner's copy replaces it whole.
	env = b.describe(t, UpdateAgent, map[string]any{"agent": "@buddi", "persona": "You keep the front desk, briefly."})
	copyPath := filepath.Join(b.agentsDir, "concierge.md")
	if !slices.Equal(env.Targets, []string{copyPath}) || !strings.Contains(env.Preview, "replaces the example whole") ||
		!strings.Contains(env.Preview, "roles: [front-desk]\ndefault: true\n---\nYou keep the front desk, briefly.\n") {
		t.Fatalf("updating an example: %v\n%s", env.Targets, env.Preview)
	}
	b.approve(t, UpdateAgent, map[string]any{"agent": "@buddi", "persona": "You keep the front desk, briefly."})
	c, _ := b.catalog(t).ByID("concierge")
	if c.Source != agents.SourcePrivate || c.Persona != "You keep the front desk, briefly." || !c.Default {
		t.Errorf("the concierge after the update: %+v", c)
	}
	if treeDigest(t, b.examples) != before {
		t.Error("the examples were written")
	}
}

// A file changed after the card was drawn is not overwritten.
func TestApprovedWriteRefusedWhenTheFileChanged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	args := map[string]any{"agent": "@scribe", "name": "Scribe Two"}
	env := b.describe(t, UpdateAgent, args)
	edited := "---\nid: scribe\nhandle: \"@scribe\"\nname: Scribe\ntools: []\n---\nThe owner edited this.\n"
	write(t, filepath.Join(b.agentsDir, "scribe.md"), edited)
	_, _ = b.live.Reload()
	if _, err := b.tools[UpdateAgent].Execute(context.Background(), b.call(t, UpdateAgent, args), &env); err == nil || !strings.Contains(err.Error(), "changed since the owner approved") {
		t.Fatalf("execute over an edited file: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(b.agentsDir, "scribe.md")); string(got) != edited {
		t.Fatalf("the owner's edit was overwritten:\n%s", got)
	}
}

// delete_agent removes the owner's file, its directory and its name from other lists; an
// example cannot be removed.
func TestDeleteAgent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	write(t, filepath.Join(b.agentsDir, "scribe", "skills", "notes.md"), "Keep notes short.\n")
	write(t, filepath.Join(b.agentsDir, "clerk.md"), "---\nid: clerk\nhandle: \"@clerk\"\nname: Clerk\n---\nYou file.\n")
	write(t, filepath.Join(b.agentsDir, "clerk", agents.DelegatesFile), `["@scribe", "concierge"]`)
	_, _ = b.live.Reload() // the watch is not running in this test
	b.refused(t, DeleteAgent, map[string]any{"agent": "@buddi"}, "shipped example", "never written")
	env := b.describe(t, DeleteAgent, map[string]any{"agent": "@scribe"})
	if !strings.Contains(env.Preview, "@clerk stop handing it work") || !strings.Contains(env.Preview, "You write things down.") {
		t.Errorf("preview:\n%s", env.Preview)
	}
	b.approve(t, DeleteAgent, map[string]any{"agent": "@scribe"})
	if _, ok := b.catalog(t).ByID("scribe"); ok {
		t.Fatal("scribe is still in the catalogue")
	}
	for _, p := range []string{"scribe.md", "scribe"} {
		if _, err := os.Stat(filepath.Join(b.agentsDir, p)); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(b.agentsDir, "clerk", agents.DelegatesFile)); strings.TrimSpace(string(got)) != `["concierge"]` {
		t.Errorf("clerk's list: %s", got)
	}
	entries, _ := os.ReadDir(b.agentsDir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// write_skill writes a shared or a private skill; a skill for an example agent is refused.
func TestWriteSkill(t *testing.T) {
	t.Parallel()
	b := setup(t)
	env := b.describe(t, WriteSkill, map[string]any{"name": "house", "description": "The owner's rules.", "body": "Be briefer."})
	if !strings.Contains(env.Preview, "replaces the shipped skill house") || !strings.Contains(env.Preview, "---\ndescription: The owner's rules.\n---\nBe briefer.\n") {
		t.Errorf("preview:\n%s", env.Preview)
	}
	b.approve(t, WriteSkill, map[string]any{"name": "house", "description": "The owner's rules.", "body": "Be briefer."})
	b.approve(t, WriteSkill, map[string]any{"name": "filing", "agent": "@scribe", "body": "File by date."})
	a, _ := b.catalog(t).ByID("scribe")
	var loaded []string
	for _, s := range a.Loaded {
		loaded = append(loaded, s.Name+":"+s.Body)
	}
	if !slices.Equal(loaded, []string{"house:Be briefer.", "filing:File by date."}) {
		t.Errorf("scribe loads %v", loaded)
	}
	b.refused(t, WriteSkill, map[string]any{"name": "x", "agent": "@buddi", "body": "y"}, "shipped example")
	b.refused(t, WriteSkill, map[string]any{"name": "Bad Name", "body": "y"}, "not a valid skill name")
	b.refused(t, WriteSkill, map[string]any{"name": "for-ghost", "agents": []string{"ghost"}, "body": "y"}, "no agent has that id or handle")
}

// A plugin's proposed agent is accepted into the owner's directory with a sidecar naming the
// plugin and version; a proposal granting the write tools is refused like create_agent.
func TestAcceptPluginAgentAndSkill(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.proposals = []plugins.Manifest{{Name: "notes", Version: "2.1.0",
		Agents: []plugins.SuggestedAgent{
			{ID: "note-taker", Handle: "notes", Name: "Note taker", Tools: []string{"platform.roster"}, Persona: "You take notes."},
			{ID: "grabby", Handle: "grabby", Name: "Grabby", Tools: []string{"platform.delete_agent"}, Persona: "You take over."},
		},
		Skills: []plugins.SuggestedSkill{{Name: "note-style", Description: "How notes look.", Body: "Bullet points."}}}}
	env := b.describe(t, AcceptPluginAgent, map[string]any{"plugin": "notes", "agent": "note-taker"})
	if !strings.Contains(env.Preview, "Proposed by the plugin notes 2.1.0") || !strings.Contains(env.Preview, "platform.roster  auto") {
		t.Errorf("preview:\n%s", env.Preview)
	}
	b.approve(t, AcceptPluginAgent, map[string]any{"plugin": "notes", "agent": "note-taker"})
	if _, ok := b.catalog(t).ByHandle("@notes"); !ok {
		t.Fatal("the accepted agent is not in the catalogue")
	}
	var side origin
	raw, err := os.ReadFile(filepath.Join(b.agentsDir, "note-taker"+SidecarSuffix))
	if err != nil || json.Unmarshal(raw, &side) != nil || side.Plugin != "notes" || side.Version != "2.1.0" || side.Kind != "agent" || side.File != "note-taker.md" {
		t.Fatalf("sidecar: %v %s", err, raw)
	}
	b.refused(t, AcceptPluginAgent, map[string]any{"plugin": "notes", "agent": "grabby"}, "cannot be granted through themselves")
	b.refused(t, AcceptPluginAgent, map[string]any{"plugin": "other", "agent": "x"}, "no installed plugin is called other")
	b.approve(t, AcceptPluginSkill, map[string]any{"plugin": "notes", "skill": "note-style"})
	if _, err := os.Stat(filepath.Join(b.skillsDir, "note-style"+SidecarSuffix)); err != nil {
		t.Errorf("the skill's sidecar: %v", err)
	}
	if !slices.ContainsFunc(b.catalog(t).Skills(), func(s agents.Skill) bool { return s.Name == "note-style" }) {
		t.Error("the accepted skill is not loaded")
	}
}

// The reads answer from the catalogue and the registry.
func TestReads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	run := func(name string, args any) string {
		t.Helper()
		res, err := b.tools[name].Execute(context.Background(), b.call(t, name, args), nil)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", name, err, res.Text)
		}
		return res.Text
	}
	if got := run(Roster, map[string]any{}); !strings.Contains(got, "@father (id agent-father) Agent father: roles maker; 2 tools; example file") ||
		!strings.Contains(got, "@scribe (id scribe) Scribe: no roles; 1 tool; owner's file") {
		t.Errorf("roster:\n%s", got)
	}
	if got := run(AgentTool, map[string]any{"agent": "@father"}); !strings.Contains(got, fatherFile) || !strings.Contains(got, "platform.create_agent  gated") {
		t.Errorf("agent:\n%s", got)
	}
	if got := run(ToolsTool, map[string]any{}); !strings.Contains(got, "host.exec (gated)") || !strings.Contains(got, "platform.roster (auto)") {
		t.Errorf("tools:\n%s", got)
	}
	if got := run(SkillsTool, map[string]any{}); !strings.Contains(got, "house: House rules. (loads for every agent; example file)") {
		t.Errorf("skills:\n%s", got)
	}
	if got := run(SkillsTool, map[string]any{"name": "house"}); !strings.Contains(got, "Be brief.") {
		t.Errorf("one skill:\n%s", got)
	}
	for _, k := range kinds {
		spec := b.tools[k.name].Spec()
		if (spec.Tier == plugins.TierGated) != slices.Contains(agents.PlatformWriteTools, k.name) {
			t.Errorf("%s is %s", k.name, spec.Tier)
		}
	}
}

// Unbound (outside buddi serve) the reads say so and the writes are refused.
func TestUnbound(t *testing.T) {
	t.Parallel()
	m := Manifest()
	for _, tl := range m.Tools {
		if tl.Spec().Tier == plugins.TierGated {
			if _, err := tl.Describe(context.Background(), plugins.Call{Tool: tl.Spec().Name, Args: json.RawMessage(`{}`)}); err == nil {
				t.Errorf("%s described unbound", tl.Spec().Name)
			}
			continue
		}
		if res, err := tl.Execute(context.Background(), plugins.Call{Tool: tl.Spec().Name, Args: json.RawMessage(`{}`)}, nil); err != nil || !res.IsError {
			t.Errorf("%s ran unbound: %v %v", tl.Spec().Name, res, err)
		}
	}
}
