package plugins

import (
	"context"
	"io/fs"
	"time"
)

// Manifest is everything one plugin contributes. Only Name, Version and Tools are required.
type Manifest struct {
	// Name is the plugin's name, lower case ("developer"); tools are named "<name>.<verb>".
	Name string
	// Version is the plugin's version; it is part of every action's hash.
	Version string
	// Description says in one line what the plugin is for.
	Description string
	// Schema is the Postgres schema the plugin owns, or empty for none.
	Schema string
	// Migrations holds the schema's SQL migrations in goose's format, at the root.
	Migrations fs.FS
	// Tools are the agent-proposed capabilities.
	Tools []Tool
	// Sources are system-invoked pollers.
	Sources []Source
	// Sentinels are deterministic watchers.
	Sentinels []Sentinel
	// Missions are suggested scheduled work the owner may accept.
	Missions []SuggestedMission
	// Views say how results are drawn on the canvas.
	Views []ViewDescriptor
	// Metrics are numbers a goal can watch.
	Metrics []Metric
	// Network has one line per host the plugin reaches and what it sends there
	// ("api.github.com: repository names and issue text"). Shown at install; the host before
	// each line's colon feeds the owner's network policy: an allowlist admits the plugin's
	// tools only when each host is in networkAllowHosts.
	Network []string
	// Agents are agents the plugin proposes; installing writes none, the owner accepts one
	// through platform.accept_plugin_agent.
	Agents []SuggestedAgent
	// Skills are skills the plugin proposes, accepted through platform.accept_plugin_skill.
	Skills []SuggestedSkill
}

// SuggestedAgent is an agent a plugin proposes: exactly the arguments of
// platform.create_agent, the grant shown to the owner tool by tool.
type SuggestedAgent struct {
	ID      string   // the agent's id
	Handle  string   // how the owner addresses it
	Name    string   // its display name
	Tools   []string // the grant it asks for
	Roles   []string // the roles it would claim
	Skills  []string // the shared skills it names
	Persona string   // its prompt, the file's body
}

// SuggestedSkill is a skill a plugin proposes: a procedure, never a privilege.
type SuggestedSkill struct {
	Name        string   // its file name without .md
	Description string   // one line on what it is for
	Agents      []string // the agents it loads for; empty is everyone
	Body        string   // the procedure, in markdown
}

// Metric is a number a goal can watch, measured for one agent (goals.md).
type Metric struct {
	// Name is "<plugin>.<metric>", e.g. "developer.failing_tests".
	Name string
	// Description says what is counted, in one line.
	Description string
	// Better is "down" or "up": which way the goal wants it to go.
	Better string
	// Measure returns the value for agent, or a Measurement that is not Known with the
	// reason: what cannot be measured is never reported as a zero.
	Measure func(ctx context.Context, agent string) (Measurement, error)
}

// Measurement is one reading of a metric.
type Measurement struct {
	Known  bool    `json:"known"`  // false: not measurable now, see Reason
	Value  float64 `json:"value"`  // the reading; 0 when not Known, which means nothing
	Reason string  `json:"reason"` // what was counted, or why it could not be
}

// Source is a system-invoked poller: core decides when it is due and hands it Enqueue.
type Source struct {
	ID          string        // names the source
	Description string        // what it polls, in one line
	Period      time.Duration // how often it is due
	// Poll does one round. It owns its cursor and its transaction; Enqueue is idempotent on
	// dedupKey, so a poll that crashed between its commit and its enqueue recovers.
	Poll func(ctx context.Context, enqueue EnqueueRun) error
}

// EnqueueRun asks core to start a run of agentID with prompt, once per dedupKey.
type EnqueueRun func(ctx context.Context, agentID, prompt, dedupKey string) error

// Sentinel is a deterministic watcher that reports findings; core decides what is said.
type Sentinel struct {
	ID          string        // names the sentinel
	Description string        // what it watches, in one line
	Period      time.Duration // how often it is due
	// Check looks once and returns what it found: no model, no prompt.
	Check func(ctx context.Context) ([]Finding, error)
	// Coalesce, when set, gathers this sentinel's urgent wakes into one run: the first waits
	// Window for company, each that follows pushes it back by Window, none waits past MaxWait.
	Coalesce *Coalesce
}

// Coalesce is a sentinel's burst rule.
type Coalesce struct {
	Window  time.Duration // how long a wake waits for company
	MaxWait time.Duration // the longest any wake waits
}

// Finding is one thing a sentinel noticed.
type Finding struct {
	Key       string   // identifies the finding from one check to the next
	Severity  string   // "urgent" or "info"
	OwnerLine string   // what the owner reads: the only text a surface shows
	Brief     string   // for the agent that picks it up: what to do; never shown
	Kind      string   // what sort of finding it is
	Subject   string   // what it is about, within its kind
	Actions   []string // what the owner can do about it
}

// SuggestedMission is scheduled work the plugin suggests; the owner accepts it or not.
type SuggestedMission struct {
	ID     string // names the mission
	Cron   string // when it runs, as a cron expression
	Prompt string // what the run is asked to do
	// Role is the role of the agent that should run it.
	Role string
}

// ViewDescriptor says which generic renderer draws a tool's result, and where in the result
// its data is: data, not code (core/views checks it at start and applies it).
type ViewDescriptor struct {
	Tool     string `json:"tool"`     // the tool's name, "<plugin>.<verb>"
	Renderer string `json:"renderer"` // timeseries, table, bars, keyvalue, document, diff, terminal, image, preview, envelope, structured (core/views maps list, card, code, markdown and link onto them)
	// Paths point into the result by the renderer's slot ("rows", "text", "title"): dotted
	// keys and [n] indexes ("results", "page.items[0]"), "" for the result itself; never an
	// expression. A slot left out takes the renderer's default.
	Paths map[string]string `json:"paths,omitempty"`
	// Options are the renderer's settings, as JSON-shaped data (a table's "columns": the
	// paths, within a row, of the columns to show).
	Options map[string]any `json:"options,omitempty"`
}
