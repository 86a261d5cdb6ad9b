package developer

import (
	"context"
	"fmt"
	"sync"

	"embed"
	"io/fs"
	"log/slog"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/seal"
	"buddi/plugins"
	"buddi/plugins/developer/confine"
	"buddi/plugins/developer/spawn"
)

// Name is the plugin's name; its tools are "developer.<verb>".
const Name = "developer"

// Version is the plugin's version. It is part of every action's hash, so a change to what a
// tool does with the same arguments raises it.
const Version = "0.1.0"

// Schema is the Postgres schema the plugin owns (§11).
const Schema = "developer"

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations returns the plugin's SQL migrations (goose's format, at the root), which
// Manifest also carries.
func Migrations() fs.FS {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embed pattern above guarantees the directory
	}
	return sub
}

// Deps is what the developer tools need from the composition root.
type Deps struct {
	// Pool is the database holding the developer schema. Required: without it every call
	// is refused.
	Pool *pgxpool.Pool
	// Home is the owner's home directory, whose §2 paths (~/.ssh, ~/.aws, the shell rc
	// files, …) are refused even in a workspace placed above them. Default: the current
	// user's home (confine refuses to work without one rather than protect nothing).
	Home string
	// DataDir is buddi's data directory (BUDDI_HOME), refused like the home's paths; the
	// vault file lives in it. Default: none beyond ~/.buddi, which is always protected.
	DataDir string
	// Protected lists further absolute paths refused the same way (a vault kept outside
	// DataDir). Default: none.
	Protected []string
	// Now is the clock for the records this plugin writes. Default: time.Now.
	Now func() time.Time
	// Processes supervises long-lived processes (developer.start). buddi serve gives the actor
	// tree's host; nil keeps them in the plugin, stopped only by developer.stop.
	Processes ProcessHost
	// Previews asks buddi's preview server about a process's preview; nil refuses
	// developer.preview.
	Previews PreviewChecker
	// Screenshots takes screenshots (headless Chromium); nil refuses developer.screenshot.
	Screenshots Screenshotter
	// Artifacts keeps the screenshots; nil refuses developer.screenshot.
	Artifacts ArtifactStore
	// LookPath finds a program on buddi's PATH; developer.search asks it for "rg". Tests
	// make ripgrep absent through it. Default: exec.LookPath.
	LookPath func(file string) (string, error)
	// SandboxCheck says whether this machine can box a command (nil) or why not. Where it
	// cannot, every run, start and git call asks the owner, with a card saying the command
	// would run unboxed. Default: sandbox.Check.
	SandboxCheck func() error
	// Seal is the installation's key: workspaces, modes, remembered commands and the tailnet
	// switch are sealed with it where the owner sets them, and checked where they are read.
	// The zero key refuses them all (no workspace, ask mode, nothing remembered).
	Seal seal.Key
	// Log receives a line for each record refused for its seal; nil logs none (the
	// developer.forged event is recorded either way).
	Log *slog.Logger
}

// Root validates dir as a workspace directory and returns its confinement: dir must be an
// absolute path to an existing directory, not at or inside a protected path (§2). A
// directory above protected paths is allowed; they stay refused inside it. Every
// filesystem touch of this plugin goes through the Root it returns.
func (d Deps) Root(dir string) (*confine.Root, error) {
	return confine.New(dir, confine.Options{Home: d.Home, Protected: d.protected()})
}

// protected is DataDir and Protected, cleaned.
func (d Deps) protected() []string {
	var out []string
	if d.DataDir != "" {
		out = append(out, filepath.Clean(d.DataDir))
	}
	for _, p := range d.Protected {
		out = append(out, filepath.Clean(p))
	}
	return out
}

// plugin is what the tools share: the dependencies with their defaults, and the store.
type plugin struct {
	deps  Deps
	store *Store
	// owner is the owner's environment, captured once; commands get only spawn's names of it.
	owner spawn.Owner
	// host supervises the processes developer.start starts.
	host ProcessHost

	mu    sync.Mutex
	tests map[string]lastTests // by agent
}

// newPlugin fills in the defaults of deps.
func newPlugin(deps Deps) *plugin {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.LookPath == nil {
		deps.LookPath = exec.LookPath
	}
	host := deps.Processes
	if host == nil {
		host = &localHost{}
	}
	store := NewStore(deps.Pool, deps.Seal, deps.Now)
	store.Log = deps.Log
	return &plugin{deps: deps, store: store, owner: ownerEnvironment(), host: host}
}

// Manifest is the developer plugin (seed 000): its schema, its migrations and its tools.
// Every tool declares tier session and narrows each call with TierFor from the agent's
// workspace record and mode, read on every call (§3). It declares no network hosts (§11).
//
// The tools of this build are developer.workspace, read, list, search, write, edit, run,
// start, output, stop, git and summarise.
func Manifest(deps Deps) plugins.Manifest {
	p := newPlugin(deps)
	return plugins.Manifest{
		Name:        Name,
		Version:     Version,
		Description: "Gives one agent a workspace directory to read, search and edit in, with a mode the owner chooses once.",
		Schema:      Schema,
		Migrations:  Migrations(),
		Tools: []plugins.Tool{
			&workspaceTool{p: p},
			&readTool{p: p},
			&listTool{p: p},
			&searchTool{p: p},
			&writeTool{p: p},
			&editTool{p: p},
			&runTool{p: p},
			&startTool{p: p},
			&outputTool{p: p},
			&stopTool{p: p},
			&gitTool{p: p},
			&summariseTool{p: p},
			&previewTool{p: p},
			&screenshotTool{p: p},
		},
		Views: []plugins.ViewDescriptor{
			{Tool: Name + ".read", Renderer: "document"},
			{Tool: Name + ".list", Renderer: "document"},
			{Tool: Name + ".search", Renderer: "document"},
			{Tool: Name + ".write", Renderer: "diff"},
			{Tool: Name + ".edit", Renderer: "diff"},
		},
		Network: nil,
		Sentinels: []plugins.Sentinel{{
			ID:          Name + ".failing-tests",
			Description: "A workspace whose last recorded test run has failing tests.",
			Period:      5 * time.Minute,
			Check:       p.failingTestsSentinel,
		}},
		Metrics: []plugins.Metric{{
			Name:        Name + ".failing_tests",
			Description: "How many tests were failing in the last test run recorded for the agent's workspace (real test runners only).",
			Better:      "down",
			Measure:     p.failingTests,
		}},
	}
}

// failingTests measures developer.failing_tests (§11) for agent: the last test run recorded
// for its workspace, the same one developer.summarise reports, counted from the runner's own
// summary lines; no workspace, no recorded run, or a run whose output did not say is not
// measurable, never a zero.
func (p *plugin) failingTests(ctx context.Context, agent string) (plugins.Measurement, error) {
	ws, found, err := p.store.Workspace(ctx, agent)
	if err != nil {
		return plugins.Measurement{}, err
	}
	if !found {
		return plugins.Measurement{Reason: agent + " has no workspace."}, nil
	}
	last, ok := p.lastTestRun(agent, ws.Directory)
	if !ok {
		return plugins.Measurement{Reason: "No test run is recorded for the workspace since buddi started."}, nil
	}
	if !last.measure.Known {
		return plugins.Measurement{Reason: last.measure.Reason}, nil
	}
	return plugins.Measurement{Known: true, Value: float64(last.measure.Failing), Reason: last.measure.Reason}, nil
}

// failingTestsSentinel finds each workspace whose last recorded test run (the failing_tests
// metric, §11) has failing tests: one info finding per agent, gone when the tests pass.
func (p *plugin) failingTestsSentinel(ctx context.Context) ([]plugins.Finding, error) {
	wss, err := p.store.Workspaces(ctx)
	if err != nil {
		return nil, err
	}
	var out []plugins.Finding
	for _, w := range wss {
		m, err := p.failingTests(ctx, w.Agent)
		if err != nil {
			return nil, err
		}
		if !m.Known || m.Value == 0 {
			continue
		}
		out = append(out, plugins.Finding{
			Key: "failing-tests:" + w.Agent, Severity: "info", Kind: "failing-tests", Subject: w.Agent,
			OwnerLine: fmt.Sprintf("%d failing %s in %s's workspace (%s).", int(m.Value), map[bool]string{true: "test", false: "tests"}[m.Value == 1], w.Agent, w.Directory),
			Brief:     "Run the tests in the workspace, read the failures and say which change broke them.",
		})
	}
	return out, nil
}
