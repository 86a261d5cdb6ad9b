package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"buddi/agents"
	"buddi/plugins"
)

// Name is the family's name: its tools are platform.<verb>.
const Name = "platform"

// Version is the family's version, part of every action's hash.
const Version = "1"

// The tools' names.
const (
	Roster            = "platform.roster"
	AgentTool         = "platform.agent"
	ToolsTool         = "platform.tools"
	SkillsTool        = "platform.skills"
	CreateAgent       = "platform.create_agent"
	UpdateAgent       = "platform.update_agent"
	WriteSkill        = "platform.write_skill"
	DeleteAgent       = "platform.delete_agent"
	AcceptPluginAgent = "platform.accept_plugin_agent"
	AcceptPluginSkill = "platform.accept_plugin_skill"
)

// Registry is what the family reads of the tool registry.
type Registry interface {
	// Tools are the registered tools' declarations, sorted by name.
	Tools() []plugins.Spec
}

// Deps is what the family needs of the running buddi.
type Deps struct {
	// Agents is the search path: the owner's directories (the only ones written) and the
	// examples (never written). Its KnownTools, when nil, is taken from Tools.
	Agents agents.Config
	// Catalog returns the current catalogue; nil loads Agents at every call.
	Catalog func() (*agents.Catalog, error)
	// Reload parses the files again after a write and returns the new catalogue (the live
	// catalogue's Reload in buddi serve); nil is Catalog.
	Reload func() (*agents.Catalog, error)
	// Tools is the registry: the grant's tiers and the installed tools.
	Tools Registry
	// Plugins are the manifests whose proposed agents and skills may be accepted; nil is none.
	Plugins func() []plugins.Manifest
	// Log hears writes and undone writes; nil discards.
	Log *slog.Logger
}

// binding is the deps the family's tools share, set by Bind.
type binding struct {
	deps atomic.Pointer[Deps]
	mu   sync.Mutex // one write at a time, from its last check to its reload
}

// errUnbound is the sentence outside buddi serve.
var errUnbound = errors.New("the platform tools are not available in this buddi process (only buddi serve makes agents)")

// get returns the deps, with defaults filled, or errUnbound.
func (b *binding) get() (*Deps, error) {
	d := b.deps.Load()
	if d == nil {
		return nil, errUnbound
	}
	return d, nil
}

// Manifest is the platform family, not bound to a running buddi yet.
func Manifest() plugins.Manifest {
	b := &binding{}
	m := plugins.Manifest{Name: Name, Version: Version,
		Description: "The roster of agents and skills, and the gated writes that make, change and remove them."}
	for _, k := range kinds {
		m.Tools = append(m.Tools, &tool{b: b, k: k})
	}
	return m
}

// Bind hands deps to the platform family among manifests; it reports whether it found it.
func Bind(manifests []plugins.Manifest, deps Deps) bool {
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	if deps.Catalog == nil {
		cfg := deps.Agents
		deps.Catalog = func() (*agents.Catalog, error) { return agents.Load(cfg) }
	}
	if deps.Reload == nil {
		deps.Reload = deps.Catalog
	}
	if deps.Agents.KnownTools == nil && deps.Tools != nil {
		reg := deps.Tools
		deps.Agents.KnownTools = func(name string) bool {
			for _, s := range reg.Tools() {
				if s.Name == name {
					return true
				}
			}
			return false
		}
	}
	for _, m := range manifests {
		for _, t := range m.Tools {
			if pt, ok := t.(*tool); ok {
				pt.b.deps.Store(&deps)
				return true
			}
		}
	}
	return false
}

// kind is one tool of the family: its declaration and what it does.
type kind struct {
	name        string
	description string
	schema      string
	write       bool
	// read answers an auto tool.
	read func(d *Deps, call plugins.Call) (plugins.Result, error)
	// plan renders a write: Describe shows it, Execute performs it.
	plan func(d *Deps, call plugins.Call) (*plan, error)
}

// tool is one platform tool.
type tool struct {
	b *binding
	k *kind
}

var _ plugins.Tool = (*tool)(nil)

// Spec declares the tool: the reads auto, the writes gated.
func (t *tool) Spec() plugins.Spec {
	s := plugins.Spec{Name: t.k.name, Description: t.k.description, Schema: json.RawMessage(t.k.schema),
		Effects: []plugins.Effect{plugins.EffectRead}, Tier: plugins.TierAuto}
	if t.k.write {
		s.Effects = []plugins.Effect{plugins.EffectFSWrite, plugins.EffectStateWrite}
		s.Tier = plugins.TierGated
	}
	return s
}

// Describe renders a read's one line, or a write's whole envelope, refusing a write that
// breaks a rule before any action exists.
func (t *tool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	if !t.k.write {
		return plugins.Envelope{Summary: "Read " + t.k.name, Effects: []plugins.Effect{plugins.EffectRead}}, nil
	}
	d, err := t.b.get()
	if err != nil {
		return plugins.Envelope{}, err
	}
	p, err := t.k.plan(d, call)
	if err != nil {
		return plugins.Envelope{}, err
	}
	return p.envelope(), nil
}

// Execute answers a read, or performs an approved write: the plan is made again, checked
// against the approved envelope's preconditions, written, and the catalogue reloaded.
func (t *tool) Execute(_ context.Context, call plugins.Call, approved *plugins.Envelope) (plugins.Result, error) {
	d, err := t.b.get()
	if err != nil {
		return plugins.Result{Text: err.Error() + ".", IsError: true}, nil
	}
	if !t.k.write {
		return t.k.read(d, call)
	}
	if approved == nil {
		return plugins.Result{}, fmt.Errorf("%s runs only as an approved action", t.k.name)
	}
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	p, err := t.k.plan(d, call)
	if err != nil {
		return plugins.Result{}, fmt.Errorf("%s can no longer be done: %w", t.k.name, err)
	}
	if !samePreconditions(p.preconditions(), approved.Preconditions) {
		return plugins.Result{}, fmt.Errorf("%s: the files changed since the owner approved it; nothing was written", t.k.name)
	}
	applied, err := agents.Apply(d.Agents, p.change)
	if err != nil {
		return plugins.Result{}, fmt.Errorf("%s: %w", t.k.name, err)
	}
	if _, lerr := d.Reload(); lerr != nil {
		uerr := applied.Undo()
		_, _ = d.Reload()
		d.Log.Warn("a platform write left the agents unable to load; it was undone", "tool", t.k.name, "err", lerr, "undo", uerr)
		return plugins.Result{}, fmt.Errorf("%s: after the write the agents did not load, so it was undone: %w", t.k.name, errors.Join(lerr, uerr))
	}
	applied.Commit()
	d.Log.Info("platform write", "tool", t.k.name, "file", p.file, "agent", call.Agent)
	return plugins.Result{Text: p.done}, nil
}

// samePreconditions reports whether two lists say the same facts.
func samePreconditions(a, b []plugins.Precondition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// kinds are the family's tools, in the order the manifest lists them.
var kinds = []*kind{
	{name: Roster, read: roster, schema: `{"type":"object","additionalProperties":false,"properties":{}}`,
		description: "List every agent: id, handle, name, roles, how many tools its grant names, and whether its file is a shipped example or the owner's."},
	{name: AgentTool, read: agentFile, schema: refSchema("The agent's handle (@dev) or id."),
		description: "Read one agent's whole file (frontmatter and persona) and its grant resolved tool by tool with each tool's tier, and the skills it loads."},
	{name: ToolsTool, read: installedTools, schema: `{"type":"object","additionalProperties":false,"properties":{}}`,
		description: "List the installed tools with their tiers (auto runs at once; gated waits for the owner's approval; session only in the owner's live request) and what each does."},
	{name: SkillsTool, read: skills, schema: `{"type":"object","additionalProperties":false,"properties":{
			"name":{"type":"string","maxLength":64,"description":"A skill's name, to read its whole file; leave out to list them all."}}}`,
		description: "List the shared skills (name, description, who they load for), or read one skill's whole file."},
	{name: CreateAgent, write: true, plan: createAgent, schema: agentSchema(true),
		description: "Propose a new agent: its file is written to the owner's agents directory once the owner approves the card, " +
			"which shows the whole file and its grant tool by tool. Interview the owner first. Grant only the tools its job needs; " +
			"the platform write tools cannot be granted. It answers everywhere as soon as it is written."},
	{name: UpdateAgent, write: true, plan: updateAgent, schema: agentSchema(false),
		description: "Propose a change to an agent: give its handle or id and only the fields that change (a list replaces the whole list). " +
			"The owner approves the whole resulting file; a widened grant lists what it adds. Changing a shipped example writes the owner's copy, which replaces it."},
	{name: WriteSkill, write: true, plan: writeSkill, schema: skillSchema,
		description: "Propose a skill (knowledge or a procedure, in markdown): shared, loading for every agent or those listed, or private to one of the owner's agents. " +
			"A skill never grants a tool. The owner approves the whole file."},
	{name: DeleteAgent, write: true, plan: deleteAgent, schema: refSchema("The agent's handle (@dev) or id."),
		description: "Propose removing one of the owner's agents: its file, its private skills and its delegates.json, and its name from every other agent's delegates.json. A shipped example cannot be removed."},
	{name: AcceptPluginAgent, write: true, plan: acceptPluginAgent, schema: `{"type":"object","additionalProperties":false,"required":["plugin","agent"],"properties":{
			"plugin":{"type":"string","minLength":1,"maxLength":64,"description":"The plugin that proposes it."},
			"agent":{"type":"string","minLength":1,"maxLength":64,"description":"The proposed agent's id."}}}`,
		description: "Propose accepting an agent a plugin proposed: validated and shown like platform.create_agent, written to the owner's directory with a record of the plugin and version it came from."},
	{name: AcceptPluginSkill, write: true, plan: acceptPluginSkill, schema: `{"type":"object","additionalProperties":false,"required":["plugin","skill"],"properties":{
			"plugin":{"type":"string","minLength":1,"maxLength":64,"description":"The plugin that proposes it."},
			"skill":{"type":"string","minLength":1,"maxLength":64,"description":"The proposed skill's name."}}}`,
		description: "Propose accepting a skill a plugin proposed: written to the owner's shared skills with a record of the plugin and version it came from."},
}

// refSchema is the arguments of a tool that names one agent.
func refSchema(what string) string {
	return `{"type":"object","additionalProperties":false,"required":["agent"],"properties":{
		"agent":{"type":"string","minLength":1,"maxLength":65,"description":` + quote(what) + `}}}`
}

// agentSchema is create_agent's arguments (create) or update_agent's (every field optional
// but the agent named).
func agentSchema(create bool) string {
	required := `["id","handle","name","persona"]`
	first := `"id":{"type":"string","minLength":1,"maxLength":64,"description":"The new agent's id: lower-case words joined by hyphens, like travel-planner."},`
	if !create {
		required = `["agent"]`
		first = `"agent":{"type":"string","minLength":1,"maxLength":65,"description":"The agent to change: its handle (@dev) or id."},`
	}
	list := func(what string) string {
		return `{"type":"array","maxItems":64,"items":{"type":"string","maxLength":80},"description":` + quote(what) + `}`
	}
	return `{"type":"object","additionalProperties":false,"required":` + required + `,"properties":{` + first + `
		"handle":{"type":"string","minLength":1,"maxLength":65,"description":"How the owner addresses it, like @travel."},
		"name":{"type":"string","minLength":1,"maxLength":80,"description":"Its display name."},
		"tools":` + list("Its grant: tool names <plugin>.<verb>, as platform.tools lists them. Only what its job needs.") + `,
		"roles":` + list("Roles it claims (front-desk, overview, recap, maker, or another kebab word); usually none.") + `,
		"skills":` + list("Shared skills it names, by name.") + `,
		"language":{"type":"string","maxLength":35,"description":"A BCP 47 tag for the language it speaks, like en or pt-BR."},
		"turn_budget":{"type":"integer","minimum":1,"maximum":1000,"description":"The most model turns one run may take."},
		"persona":{"type":"string","minLength":1,"maxLength":100000,"description":"Its prompt: who it is, what it is for, how it sounds, what it must not do."}}}`
}

const skillSchema = `{"type":"object","additionalProperties":false,"required":["name","body"],"properties":{
	"name":{"type":"string","minLength":1,"maxLength":64,"description":"The skill's name, its file name without .md: lower case and hyphens, like house-rules."},
	"description":{"type":"string","maxLength":200,"description":"One line on what it is for."},
	"agents":{"type":"array","maxItems":64,"items":{"type":"string","maxLength":65},"description":"A shared skill loads for these agents (ids or handles); leave out to load it for every agent."},
	"agent":{"type":"string","maxLength":65,"description":"Make it private to this one of the owner's agents (its handle or id) instead of shared."},
	"body":{"type":"string","minLength":1,"maxLength":100000,"description":"The knowledge or procedure, in markdown."}}}`

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
