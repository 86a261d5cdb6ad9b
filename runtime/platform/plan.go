package platform

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"buddi/agents"
	"buddi/plugins"
)

// SidecarSuffix ends the file beside an accepted agent or skill that records the plugin and
// version that proposed it: <id>.plugin.json beside <id>.md.
const SidecarSuffix = ".plugin.json"

// plan is one write, rendered: what the owner is shown and what Execute writes.
type plan struct {
	summary        string
	lines          []string // sentences before the grant and the file
	file           string   // the file written, or removed
	content        string   // the complete resulting file; for a removal, the file as it is
	header         string   // what the file is called on the card; "" is "The whole file"
	grant          []grantLine
	showGrant      bool
	added, removed []grantLine
	change         agents.Change
	done           string // what the model is told once it is written
}

// paths are every path the plan writes or removes, sorted.
func (p *plan) paths() []string {
	var out []string
	for path := range p.change.Writes {
		out = append(out, path)
	}
	out = append(out, p.change.Removes...)
	sort.Strings(out)
	return slices.Compact(out)
}

// preconditions are the digests of the files the plan replaces or removes ("absent" for a
// file it creates): checked again, through the envelope's hash, before it runs.
func (p *plan) preconditions() []plugins.Precondition {
	var out []plugins.Precondition
	for _, path := range p.paths() {
		out = append(out, plugins.Precondition{What: "sha256 of " + path, Value: digestOf(path)})
	}
	return out
}

// digestOf is a file's digest, "directory" for a directory, or "unreadable".
func digestOf(path string) string {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return "directory"
	}
	d, err := agents.Digest(path)
	if err != nil {
		return "unreadable"
	}
	return d
}

// envelope is the plan as the owner approves it: the whole file and the resolved grant.
func (p *plan) envelope() plugins.Envelope {
	var b strings.Builder
	for _, l := range p.lines {
		b.WriteString(l + "\n")
	}
	if p.showGrant {
		b.WriteString("\n" + grantText(p.grant))
	}
	if len(p.added) > 0 {
		b.WriteString("\nAdded to the grant: " + joinGrant(p.added) + ".\n")
	}
	if len(p.removed) > 0 {
		b.WriteString("\nTaken out of the grant: " + joinGrant(p.removed) + ".\n")
	}
	if p.content != "" {
		header := p.header
		if header == "" {
			header = "The whole file"
		}
		fmt.Fprintf(&b, "\n%s, %s:\n%s", header, p.file, p.content)
	}
	detail := map[string]any{"file": p.file, "content": p.content}
	if p.showGrant {
		detail["grant"] = p.grant
		detail["added"] = p.added
		detail["removed"] = p.removed
	}
	return plugins.Envelope{
		Summary: p.summary, Effects: []plugins.Effect{plugins.EffectFSWrite, plugins.EffectStateWrite},
		Targets: p.paths(), Detail: detail, Preview: b.String(), Preconditions: p.preconditions(),
	}
}

// joinGrant lists tools with their tiers: "host.exec (gated), web.fetch (auto)".
func joinGrant(g []grantLine) string {
	parts := make([]string, len(g))
	for i, l := range g {
		parts[i] = fmt.Sprintf("%s (%s)", l.Tool, l.Tier)
	}
	return strings.Join(parts, ", ")
}

// refuse is a Describe refusal: one sentence for the model.
func refuse(format string, args ...any) error { return fmt.Errorf(format, args...) }

// wouldNotLoad says why the catalogue would not load after a change, every problem named.
func wouldNotLoad(err error) error {
	var le *agents.LoadError
	if !errors.As(err, &le) {
		return refuse("the agents would not load with it: %v", err)
	}
	parts := make([]string, len(le.Problems))
	for i, p := range le.Problems {
		parts[i] = p.Error()
	}
	return refuse("the agents would not load with it: %s", strings.Join(parts, "; "))
}

// refuseWriteTools refuses a grant that names a platform write tool.
func refuseWriteTools(tools []string) error {
	var found []string
	for _, t := range tools {
		if slices.Contains(agents.PlatformWriteTools, t) {
			found = append(found, t)
		}
	}
	if len(found) > 0 {
		return refuse("the grant names %s: the platform write tools cannot be granted through themselves; only the owner gives them, by editing an agent's file", strings.Join(found, ", "))
	}
	return nil
}

// agentsDir is the owner's agents directory, or a refusal when there is none.
func agentsDir(d *Deps) (string, error) {
	if d.Agents.AgentsDir == "" {
		return "", refuse("this buddi has no owner's agents directory to write to")
	}
	return d.Agents.AgentsDir, nil
}

// agentArgs are create_agent's and update_agent's arguments; a field left out is nil.
type agentArgs struct {
	ID         *string   `json:"id"`
	Agent      string    `json:"agent"`
	Handle     *string   `json:"handle"`
	Name       *string   `json:"name"`
	Tools      *[]string `json:"tools"`
	Roles      *[]string `json:"roles"`
	Skills     *[]string `json:"skills"`
	Language   *string   `json:"language"`
	TurnBudget *int      `json:"turn_budget"`
	Persona    *string   `json:"persona"`
}

// apply lays the arguments given over a draft.
func (a agentArgs) apply(d agents.Draft) agents.Draft {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = strings.TrimSpace(*src)
		}
	}
	set(&d.Handle, a.Handle)
	set(&d.Name, a.Name)
	set(&d.Language, a.Language)
	set(&d.Persona, a.Persona)
	if a.Tools != nil {
		d.Tools = slices.Clone(*a.Tools)
	}
	if a.Roles != nil {
		d.Roles = slices.Clone(*a.Roles)
	}
	if a.Skills != nil {
		d.Skills = slices.Clone(*a.Skills)
	}
	if a.TurnBudget != nil {
		d.TurnBudget = *a.TurnBudget
	}
	if d.Handle != "" {
		d.Handle = agents.NormalizeHandle(d.Handle)
	}
	return d
}

func createAgent(d *Deps, call plugins.Call) (*plan, error) {
	var args agentArgs
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return nil, fmt.Errorf("read the arguments: %w", err)
	}
	draft := agents.Draft{}
	if args.ID != nil {
		draft.ID = strings.TrimSpace(*args.ID)
	}
	return newAgent(d, args.apply(draft), nil)
}

// origin is the plugin that proposed what is accepted.
type origin struct {
	Plugin     string `json:"plugin"`
	Version    string `json:"version"`
	Kind       string `json:"kind"`
	File       string `json:"file"`
	SHA256     string `json:"sha256"`
	AcceptedAt string `json:"accepted_at,omitempty"`
}

// newAgent plans a new agent's file in the owner's directory (and, for an accepted one, its
// sidecar).
func newAgent(d *Deps, draft agents.Draft, from *origin) (*plan, error) {
	dir, err := agentsDir(d)
	if err != nil {
		return nil, err
	}
	if err := refuseWriteTools(draft.Tools); err != nil {
		return nil, err
	}
	cat, err := d.Catalog()
	if err != nil {
		return nil, refuse("the agents do not load now, so nothing can be added until they do: %v", err)
	}
	path := filepath.Join(dir, draft.ID+".md")
	content := draft.Render()
	if _, err := agents.Check(path, content); err != nil {
		return nil, wouldNotLoad(err)
	}
	if other, ok := cat.ByID(draft.ID); ok {
		return nil, refuse("there is already an agent with id %s (%s, %s); choose another id, or change that one with platform.update_agent", draft.ID, other.Handle, other.Path)
	}
	if other, ok := cat.ByHandle(draft.Handle); ok {
		return nil, refuse("the handle %s is taken by %s (id %s); choose another handle", draft.Handle, other.Name, other.ID)
	}
	if _, err := os.Lstat(path); err == nil {
		return nil, refuse("the file %s already exists but is no agent in the catalogue; the owner moves it aside, or choose another id", path)
	}
	p := &plan{file: path, content: string(content), grant: resolve(d, draft.Tools), showGrant: true,
		change: agents.Change{Writes: map[string][]byte{path: content}}}
	p.summary = fmt.Sprintf("Create the agent %s (%s) with %s", draft.Handle, draft.Name, count(len(draft.Tools), "tool"))
	p.lines = append(p.lines, fmt.Sprintf("A new agent, %s (id %s), in the owner's directory: %s.", draft.Handle, draft.ID, path))
	for _, r := range draft.Roles {
		if holder, err := cat.ForRole(r); err == nil {
			p.lines = append(p.lines, fmt.Sprintf("It claims the role %s, which %s holds now (the first claimant keeps it: the owner's files come before the examples, each by file name).", r, holder.Handle))
		}
	}
	p.done = fmt.Sprintf("Created %s (%s) in %s; it answers now, on every surface. The owner gives it a model account on its Settings page if it has none.", draft.Handle, draft.Name, path)
	if from != nil {
		side, err := sidecar(path, content, *from)
		if err != nil {
			return nil, err
		}
		p.change.Writes[strings.TrimSuffix(path, ".md")+SidecarSuffix] = side
		p.summary = fmt.Sprintf("Accept the agent %s (%s) that the plugin %s proposes, with %s", draft.Handle, draft.Name, from.Plugin, count(len(draft.Tools), "tool"))
		p.lines = append(p.lines, fmt.Sprintf("Proposed by the plugin %s %s: once accepted the file is the owner's; a record of where it came from goes beside it, and an upgrade of the plugin rewrites nothing.", from.Plugin, from.Version))
	}
	if err := try(d, p, draft.ID); err != nil {
		return nil, err
	}
	return p, nil
}

// sidecar renders the record beside an accepted file.
func sidecar(path string, content []byte, o origin) ([]byte, error) {
	o.File = filepath.Base(path)
	o.SHA256 = digestBytes(content)
	out, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("record where %s came from: %w", path, err)
	}
	return append(out, '\n'), nil
}

// try loads the catalogue as the plan leaves it; id, when set, must be in it afterwards.
func try(d *Deps, p *plan, id string) error {
	cat, err := agents.Try(d.Agents, p.change)
	if err != nil {
		return wouldNotLoad(err)
	}
	if id != "" {
		if _, ok := cat.ByID(id); !ok {
			return refuse("after the write there would be no agent %s", id)
		}
	}
	return nil
}

func updateAgent(d *Deps, call plugins.Call) (*plan, error) {
	var args agentArgs
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return nil, fmt.Errorf("read the arguments: %w", err)
	}
	dir, err := agentsDir(d)
	if err != nil {
		return nil, err
	}
	cat, err := d.Catalog()
	if err != nil {
		return nil, refuse("the agents do not load now, so nothing can be changed until they do: %v", err)
	}
	a, ok := find(cat, args.Agent)
	if !ok {
		return nil, refuse("there is no agent %s; platform.roster lists them", args.Agent)
	}
	_, declared, err := agents.ReadSource(d.Agents, a)
	if err != nil {
		return nil, err
	}
	before := agents.DraftOf(a, declared)
	after := args.apply(agents.DraftOf(a, declared))
	if err := refuseWriteTools(after.Tools); err != nil {
		return nil, err
	}
	if draftsEqual(before, after) {
		return nil, refuse("nothing in %s's file would change", a.Handle)
	}
	if after.Handle != before.Handle {
		if other, ok := cat.ByHandle(after.Handle); ok {
			return nil, refuse("the handle %s is taken by %s (id %s); choose another handle", after.Handle, other.Name, other.ID)
		}
	}
	path := a.Path
	p := &plan{showGrant: true, grant: resolve(d, after.Tools)}
	if a.Source == agents.SourceExample {
		path = filepath.Join(dir, filepath.Base(a.Path))
		if _, err := os.Lstat(path); err == nil {
			return nil, refuse("the file %s already exists but is not %s's; the owner moves it aside first", path, a.Handle)
		}
		p.lines = append(p.lines, fmt.Sprintf("%s is a shipped example (%s): the owner's copy goes in %s and replaces the example whole; the examples are never written.", a.Handle, a.Path, path))
	}
	content := after.Render()
	if _, err := agents.Check(path, content); err != nil {
		return nil, wouldNotLoad(err)
	}
	p.file, p.content = path, string(content)
	p.change = agents.Change{Writes: map[string][]byte{path: content}}
	p.added = resolve(d, missing(after.Tools, before.Tools))
	p.removed = resolve(d, missing(before.Tools, after.Tools))
	p.summary = fmt.Sprintf("Change the agent %s (%s)", a.Handle, a.Name)
	if len(p.added) > 0 {
		p.summary += fmt.Sprintf(", widening its grant by %s", count(len(p.added), "tool"))
	}
	p.lines = append([]string{fmt.Sprintf("%s's file becomes the one below: %s.", a.Handle, path)}, p.lines...)
	if after.Handle != before.Handle {
		p.lines = append(p.lines, fmt.Sprintf("Its handle changes from %s to %s.", before.Handle, after.Handle))
	}
	p.done = fmt.Sprintf("Changed %s (%s); the change applies from its next run, on every surface.", after.Handle, after.Name)
	if err := try(d, p, a.ID); err != nil {
		return nil, err
	}
	return p, nil
}

// draftsEqual reports whether two drafts declare the same file.
func draftsEqual(a, b agents.Draft) bool {
	return string(a.Render()) == string(b.Render())
}

// missing are the tools of a that b does not name, in a's order.
func missing(a, b []string) []string {
	var out []string
	for _, t := range a {
		if !slices.Contains(b, t) {
			out = append(out, t)
		}
	}
	return out
}

func deleteAgent(d *Deps, call plugins.Call) (*plan, error) {
	var args refArgs
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return nil, fmt.Errorf("read the arguments: %w", err)
	}
	dir, err := agentsDir(d)
	if err != nil {
		return nil, err
	}
	cat, err := d.Catalog()
	if err != nil {
		return nil, refuse("the agents do not load now, so nothing can be removed until they do: %v", err)
	}
	a, ok := find(cat, args.Agent)
	if !ok {
		return nil, refuse("there is no agent %s; platform.roster lists them", args.Agent)
	}
	if a.Source == agents.SourceExample {
		return nil, refuse("%s is a shipped example (%s): the examples are never written, so it cannot be removed; the owner can replace it with a file of the same id", a.Handle, a.Path)
	}
	current, err := os.ReadFile(a.Path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", a.Path, err)
	}
	p := &plan{file: a.Path, content: string(current), change: agents.Change{Writes: map[string][]byte{}, Removes: []string{a.Path}}}
	p.summary = fmt.Sprintf("Remove the agent %s (%s)", a.Handle, a.Name)
	p.lines = append(p.lines, fmt.Sprintf("Removes %s's file %s.", a.Handle, a.Path))
	own := filepath.Join(dir, a.ID)
	if fi, err := os.Stat(own); err == nil && fi.IsDir() {
		p.change.Removes = append(p.change.Removes, own)
		p.lines = append(p.lines, fmt.Sprintf("Removes its directory %s (its private skills and its delegates.json).", own))
	}
	side := strings.TrimSuffix(a.Path, ".md") + SidecarSuffix
	if _, err := os.Stat(side); err == nil {
		p.change.Removes = append(p.change.Removes, side)
	}
	stops, err := dropFromDelegates(d, cat, a, p)
	if err != nil {
		return nil, err
	}
	if len(stops) > 0 {
		p.lines = append(p.lines, fmt.Sprintf("%s stop handing it work: it comes off their delegates.json.", strings.Join(stops, ", ")))
	}
	after, err := agents.Try(d.Agents, p.change)
	if err != nil {
		return nil, wouldNotLoad(err)
	}
	if back, ok := after.ByID(a.ID); ok {
		p.lines = append(p.lines, fmt.Sprintf("The shipped example %s (%s) comes back in its place.", back.Handle, back.Path))
	}
	p.header = "The file it removes, as it is now"
	p.done = fmt.Sprintf("Removed %s (%s).", a.Handle, a.Name)
	return p, nil
}

// dropFromDelegates takes the removed agent off every other owner's delegates.json, adding
// the rewrites to the plan; it returns the handles of the agents whose lists change.
func dropFromDelegates(d *Deps, cat *agents.Catalog, gone agents.Agent, p *plan) ([]string, error) {
	entries, err := os.ReadDir(d.Agents.AgentsDir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", d.Agents.AgentsDir, err)
	}
	var stops []string
	for _, e := range entries {
		if !e.IsDir() || e.Name() == gone.ID || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(d.Agents.AgentsDir, e.Name(), agents.DelegatesFile)
		raw, err := os.ReadFile(path)
		if err != nil {
			continue // none, or unreadable: nothing to take off
		}
		var list []string
		if json.Unmarshal(raw, &list) != nil {
			continue
		}
		kept := slices.DeleteFunc(slices.Clone(list), func(s string) bool {
			s = strings.TrimSpace(s)
			return s == gone.ID || agents.NormalizeHandle(s) == gone.Handle
		})
		if len(kept) == len(list) {
			continue
		}
		out, err := json.Marshal(kept)
		if err != nil {
			return nil, fmt.Errorf("rewrite %s: %w", path, err)
		}
		p.change.Writes[path] = append(out, '\n')
		who := e.Name()
		if a, ok := cat.ByID(who); ok {
			who = a.Handle
		}
		stops = append(stops, who)
	}
	return stops, nil
}

// skillArgs are write_skill's arguments.
type skillArgs struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Agents      []string `json:"agents"`
	Agent       string   `json:"agent"`
	Body        string   `json:"body"`
}

func writeSkill(d *Deps, call plugins.Call) (*plan, error) {
	var args skillArgs
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return nil, fmt.Errorf("read the arguments: %w", err)
	}
	return skillPlan(d, args, nil)
}

// skillPlan plans a skill's file: shared, or private to one of the owner's agents.
func skillPlan(d *Deps, args skillArgs, from *origin) (*plan, error) {
	cat, err := d.Catalog()
	if err != nil {
		return nil, refuse("the agents do not load now, so nothing can be added until they do: %v", err)
	}
	name := strings.TrimSpace(args.Name)
	draft := agents.SkillDraft{Name: name, Description: strings.TrimSpace(args.Description), Agents: args.Agents, Body: args.Body}
	var path, where string
	if args.Agent != "" {
		a, ok := find(cat, args.Agent)
		if !ok {
			return nil, refuse("there is no agent %s; platform.roster lists them", args.Agent)
		}
		if a.Source == agents.SourceExample {
			return nil, refuse("%s is a shipped example: its private skills sit beside its file, which is never written; change it with platform.update_agent first (that writes the owner's copy), or make the skill shared with agents: [%s]", a.Handle, a.ID)
		}
		if len(args.Agents) > 0 {
			return nil, refuse("a private skill has no agents list: it loads only for %s", a.Handle)
		}
		dir, err := agentsDir(d)
		if err != nil {
			return nil, err
		}
		path, where = filepath.Join(dir, a.ID, "skills", name+".md"), fmt.Sprintf("private to %s", a.Handle)
	} else {
		if d.Agents.SkillsDir == "" {
			return nil, refuse("this buddi has no owner's skills directory to write to")
		}
		path, where = filepath.Join(d.Agents.SkillsDir, name+".md"), "shared, loading for every agent"
		if len(args.Agents) > 0 {
			where = "shared, loading for " + strings.Join(args.Agents, ", ")
		}
	}
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return nil, refuse("%q is not a skill name; use lower case and hyphens, like house-rules", name)
	}
	content := draft.Render()
	p := &plan{file: path, content: string(content), change: agents.Change{Writes: map[string][]byte{path: content}}}
	p.summary = fmt.Sprintf("Write the skill %s (%s)", name, where)
	p.lines = append(p.lines, fmt.Sprintf("A skill, %s: knowledge and procedure only, it grants no tool.", where))
	if digestOf(path) != "absent" {
		p.summary = fmt.Sprintf("Replace the skill %s (%s)", name, where)
		p.lines = append(p.lines, fmt.Sprintf("It replaces the file %s as it is now.", path))
	}
	for _, s := range cat.Skills() {
		if s.Name == name && s.Source == agents.SourceExample && args.Agent == "" {
			p.lines = append(p.lines, fmt.Sprintf("It replaces the shipped skill %s (%s) whole.", name, s.Path))
		}
	}
	p.done = fmt.Sprintf("Wrote the skill %s in %s; it loads from the next run.", name, path)
	if from != nil {
		side, err := sidecar(path, content, *from)
		if err != nil {
			return nil, err
		}
		p.change.Writes[strings.TrimSuffix(path, ".md")+SidecarSuffix] = side
		p.summary = fmt.Sprintf("Accept the skill %s that the plugin %s proposes", name, from.Plugin)
		p.lines = append(p.lines, fmt.Sprintf("Proposed by the plugin %s %s: once accepted the file is the owner's; a record of where it came from goes beside it.", from.Plugin, from.Version))
	}
	if err := try(d, p, ""); err != nil {
		return nil, err
	}
	return p, nil
}

// proposer finds a plugin's manifest by name.
func proposer(d *Deps, name string) (plugins.Manifest, error) {
	if d.Plugins != nil {
		for _, m := range d.Plugins() {
			if m.Name == name {
				return m, nil
			}
		}
	}
	return plugins.Manifest{}, refuse("no installed plugin is called %s", name)
}

func acceptPluginAgent(d *Deps, call plugins.Call) (*plan, error) {
	var args struct {
		Plugin string `json:"plugin"`
		Agent  string `json:"agent"`
	}
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return nil, fmt.Errorf("read the arguments: %w", err)
	}
	m, err := proposer(d, args.Plugin)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(m.Agents, func(s plugins.SuggestedAgent) bool { return s.ID == args.Agent })
	if i < 0 {
		return nil, refuse("the plugin %s proposes no agent %s", m.Name, args.Agent)
	}
	s := m.Agents[i]
	draft := agents.Draft{ID: s.ID, Handle: agents.NormalizeHandle(s.Handle), Name: s.Name, Tools: slices.Clone(s.Tools),
		Roles: slices.Clone(s.Roles), Skills: slices.Clone(s.Skills), Persona: s.Persona}
	return newAgent(d, draft, &origin{Plugin: m.Name, Version: m.Version, Kind: "agent", AcceptedAt: stamp(call)})
}

func acceptPluginSkill(d *Deps, call plugins.Call) (*plan, error) {
	var args struct {
		Plugin string `json:"plugin"`
		Skill  string `json:"skill"`
	}
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return nil, fmt.Errorf("read the arguments: %w", err)
	}
	m, err := proposer(d, args.Plugin)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(m.Skills, func(s plugins.SuggestedSkill) bool { return s.Name == args.Skill })
	if i < 0 {
		return nil, refuse("the plugin %s proposes no skill %s", m.Name, args.Skill)
	}
	s := m.Skills[i]
	return skillPlan(d, skillArgs{Name: s.Name, Description: s.Description, Agents: s.Agents, Body: s.Body},
		&origin{Plugin: m.Name, Version: m.Version, Kind: "skill", AcceptedAt: stamp(call)})
}

// stamp is when the call was proposed, which Describe renders with (never the wall clock).
func stamp(call plugins.Call) string {
	if call.Now.IsZero() {
		return ""
	}
	return call.Now.UTC().Format("2006-01-02T15:04:05Z")
}

// digestBytes is the sha256 of data in hex.
func digestBytes(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
