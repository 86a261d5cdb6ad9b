package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"buddi/app"
	"buddi/core/action"
	"buddi/core/registry"
	"buddi/plugins"
	"buddi/plugins/mcp"
)

type pluginsCmd struct {
	List   pluginsListCmd   `cmd:"" default:"withargs" help:"List the installed plugins (read from plugins.json; no database needed)."`
	Show   pluginsShowCmd   `cmd:"" help:"Show what one installed plugin contributes: its tools and tiers, hosts, suggestions."`
	Add    pluginsAddCmd    `cmd:"" help:"Install an MCP server as a plugin: shows its whole contribution, installs with --yes."`
	Tier   pluginsTierCmd   `cmd:"" help:"Set one tool of an installed plugin to auto or gated."`
	Remove pluginsRemoveCmd `cmd:"" help:"Uninstall a plugin: its data stays; approvals pending on its tools are rejected."`
}

// pluginsHome is buddi's home, where plugins.json is.
func pluginsHome() (string, error) {
	cfg, err := loadConfig()
	if err != nil {
		return "", err
	}
	return cfg.Home, nil
}

// restartNote says when a change to the record applies.
const restartNote = "buddi serve reads plugins.json when it starts: restart it for this to apply."

type pluginsListCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c pluginsListCmd) Run(env *runEnv) error {
	home, err := pluginsHome()
	if err != nil {
		return err
	}
	rec, err := mcp.LoadRecord(home)
	if err != nil {
		return err
	}
	if c.JSON {
		if rec.Plugins == nil {
			rec.Plugins = []mcp.Plugin{}
		}
		return writeJSON(env, rec.Plugins)
	}
	if len(rec.Plugins) == 0 {
		fmt.Fprintln(env.stdout, "no plugins are installed: add an MCP server with `buddi plugins add NAME -- COMMAND ARGS…`")
		return nil
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tTOOLS\tREACHED BY\tINSTALLED")
	for _, p := range rec.Plugins {
		auto := 0
		for _, t := range p.Tools {
			if t.Tier == plugins.TierAuto {
				auto++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d (%d auto)\t%s\t%s\n", p.Name, p.Version, len(p.Tools), auto, p.Transport(), p.InstalledAt.Local().Format("2006-01-02 15:04"))
	}
	return tw.Flush()
}

type pluginsShowCmd struct {
	Name string `arg:"" help:"The plugin's name."`
	JSON bool   `help:"Print JSON."`
}

func (c pluginsShowCmd) Run(env *runEnv) error {
	p, _, err := installedPlugin(c.Name)
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(env, p)
	}
	fmt.Fprint(env.stdout, mcp.Contribution(p))
	return nil
}

// installedPlugin reads the record and finds name in it.
func installedPlugin(name string) (mcp.Plugin, mcp.Record, error) {
	home, err := pluginsHome()
	if err != nil {
		return mcp.Plugin{}, mcp.Record{}, err
	}
	rec, err := mcp.LoadRecord(home)
	if err != nil {
		return mcp.Plugin{}, rec, err
	}
	p, ok := rec.Find(name)
	if !ok {
		return p, rec, &exitError{code: 1, err: fmt.Errorf("no plugin %s is installed: `buddi plugins list` shows what is", name)}
	}
	return p, rec, nil
}

type pluginsAddCmd struct {
	Name     string   `arg:"" help:"The plugin's name: its tools are NAME.TOOL."`
	URL      string   `help:"The server's streamable HTTP endpoint, on loopback (instead of a command)." name:"url"`
	Manifest string   `help:"The buddi manifest (buddi-plugin.json) giving each tool its tier and effects; default: the one in the plugin's directory, if any."`
	Dir      string   `help:"The plugin's directory: the server's working directory, where its buddi-plugin.json is looked for. Default: the directory of the script the command names."`
	Env      []string `help:"KEY=VALUE the server gets in its environment (besides PATH, HOME, USER, LANG, TMPDIR)." sep:"none"`
	Upgrade  bool     `help:"Accept the server's tools again (after an upgrade): shows what changed."`
	Yes      bool     `help:"Install: without it, only the contribution is shown."`
	JSON     bool     `help:"Print the plugin as it would be recorded, as JSON."`
	Command  []string `arg:"" optional:"" passthrough:"" help:"The server's command and arguments, after --."`
}

func (c pluginsAddCmd) Run(env *runEnv) error {
	home, err := pluginsHome()
	if err != nil {
		return err
	}
	if err := mcp.CheckName(c.Name, app.CompiledIn()); err != nil {
		return &exitError{code: 2, err: err}
	}
	rec, err := mcp.LoadRecord(home)
	if err != nil {
		return err
	}
	previous, exists := rec.Find(c.Name)
	if exists && !c.Upgrade {
		return &exitError{code: 1, err: fmt.Errorf("plugin %s is installed already: `buddi plugins add %s --upgrade` shows what changed and accepts it with --yes", c.Name, c.Name)}
	}
	if !exists && c.Upgrade {
		return &exitError{code: 1, err: fmt.Errorf("no plugin %s is installed to upgrade: `buddi plugins list` shows what is", c.Name)}
	}
	p, manifestPath, err := c.plugin(previous, exists)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	var m *mcp.Manifest
	if manifestPath != "" {
		got, err := mcp.ReadManifest(manifestPath)
		if err != nil {
			return &exitError{code: 1, err: err}
		}
		m = &got
	}
	ctx, cancel := context.WithTimeout(env.ctx, time.Minute)
	defer cancel()
	server, version, listed, err := mcp.Inspect(ctx, p, mcp.ConnectOptions{})
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	var prev *mcp.Plugin
	if exists {
		prev = &previous
	}
	built := mcp.Build(p, server, version, listed, m, manifestPath, prev, time.Now())
	if _, err := registry.New(mcp.NewHost(mcp.Record{Plugins: []mcp.Plugin{built}}, mcp.HostOptions{}).Manifests()...); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("plugin %s cannot be installed: buddi's registry refuses it: %w", c.Name, err)}
	}
	if c.JSON {
		if err := writeJSON(env, built); err != nil {
			return err
		}
	} else {
		fmt.Fprint(env.stdout, mcp.Contribution(built))
		if exists {
			changes := mcp.Diff(previous.Tools, listed)
			if len(changes) == 0 {
				fmt.Fprintln(env.stdout, "\nNo tool changed since you accepted them.")
			} else {
				fmt.Fprintln(env.stdout, "\nChanged since you accepted them:")
				for _, ch := range changes {
					fmt.Fprintln(env.stdout, "  "+ch.Sentence())
				}
			}
		}
	}
	if !c.Yes {
		fmt.Fprintf(env.stderr, "nothing is installed yet: run the same command with --yes to install %s as shown\n", c.Name)
		return nil
	}
	rec.Put(built)
	if err := rec.Save(home); err != nil {
		return err
	}
	verb := "installed"
	if exists {
		verb = "accepted again"
	}
	fmt.Fprintf(env.stderr, "plugin %s %s (%s). %s\n", c.Name, verb, mcp.RecordPath(home), restartNote)
	return nil
}

// plugin is the plugin to inspect, from the flags or, for an upgrade without a command,
// from the record; and the manifest's path, if there is one.
func (c pluginsAddCmd) plugin(previous mcp.Plugin, exists bool) (mcp.Plugin, string, error) {
	command := c.Command
	if len(command) > 0 && command[0] == "--" {
		command = command[1:]
	}
	p := mcp.Plugin{Name: c.Name, URL: c.URL, Command: command, Env: c.Env, Dir: c.Dir}
	if exists && len(command) == 0 && c.URL == "" {
		p.Command, p.URL, p.Dir = previous.Command, previous.URL, previous.Dir
		if len(c.Env) == 0 {
			p.Env = previous.Env
		}
	}
	switch {
	case p.URL != "" && len(p.Command) > 0:
		return p, "", errors.New("give the server's command after -- or its --url, not both")
	case p.URL == "" && len(p.Command) == 0:
		return p, "", errors.New("give the server's command after -- (buddi plugins add NAME -- COMMAND ARGS…) or its --url")
	case p.URL != "":
		if err := mcp.CheckURL(p.URL); err != nil {
			return p, "", err
		}
	}
	for _, kv := range p.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return p, "", fmt.Errorf("--env %q is not KEY=VALUE", kv)
		}
	}
	var dirs []string
	if len(p.Command) > 0 {
		if strings.ContainsRune(p.Command[0], filepath.Separator) {
			abs, err := filepath.Abs(p.Command[0])
			if err != nil {
				return p, "", fmt.Errorf("find the server's command: %w", err)
			}
			p.Command = append([]string{abs}, p.Command[1:]...)
			dirs = append(dirs, filepath.Dir(abs))
		}
		for _, a := range p.Command[1:] {
			if st, err := os.Stat(a); err == nil && !st.IsDir() {
				abs, _ := filepath.Abs(a)
				dirs = append([]string{filepath.Dir(abs)}, dirs...)
				break
			}
		}
	}
	if p.Dir == "" && len(dirs) > 0 {
		p.Dir = dirs[0]
	}
	if p.Dir != "" {
		abs, err := filepath.Abs(p.Dir)
		if err != nil {
			return p, "", fmt.Errorf("the plugin's directory: %w", err)
		}
		p.Dir = abs
		dirs = append([]string{abs}, dirs...)
	}
	if c.Manifest != "" {
		abs, err := filepath.Abs(c.Manifest)
		return p, abs, err
	}
	if exists && previous.Manifest != "" {
		if _, err := os.Stat(previous.Manifest); err == nil {
			return p, previous.Manifest, nil
		}
	}
	found, err := mcp.FindManifest(dirs...)
	return p, found, err
}

type pluginsTierCmd struct {
	Name string `arg:"" help:"The plugin's name."`
	Tool string `arg:"" help:"The tool: NAME.TOOL, or the server's name for it."`
	Tier string `arg:"" enum:"auto,gated" help:"auto (runs when a model calls it) or gated (each call waits for your approval)."`
	JSON bool   `name:"json" help:"Print JSON: {\"ok\",\"plugin\",\"tool\",\"tier\"}."`
}

func (c pluginsTierCmd) Run(env *runEnv) error {
	home, err := pluginsHome()
	if err != nil {
		return err
	}
	rec, err := mcp.LoadRecord(home)
	if err != nil {
		return err
	}
	t, err := rec.SetTier(c.Name, c.Tool, plugins.Tier(c.Tier))
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	if err := rec.Save(home); err != nil {
		return err
	}
	return report(env, c.JSON, acted(map[string]any{"plugin": c.Name, "tool": t.Name, "tier": t.Tier}), "%s is %s now. %s", t.Name, t.Tier, restartNote)
}

type pluginsRemoveCmd struct {
	Name  string `arg:"" help:"The plugin's name."`
	Purge bool   `help:"Also say what of the plugin's own data buddi would destroy, and destroy it (irreversible)."`
	JSON  bool   `name:"json" help:"Print JSON: {\"ok\",\"name\",\"record\",\"dir\",\"rejected\"}, rejected being the approvals it rejected."`
}

func (c pluginsRemoveCmd) Run(env *runEnv) error {
	p, rec, err := installedPlugin(c.Name)
	if err != nil {
		return err
	}
	// An unresolvable tool stops the catalogue from loading: refuse while a grant names one.
	cat, err := loadCatalog()
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("the agents do not load, so buddi cannot check whose grant names plugin %s's tools; fix them first: %w", c.Name, err)}
	}
	for _, a := range cat.All() {
		var held []string
		for _, t := range a.Tools {
			if strings.HasPrefix(t, c.Name+".") {
				held = append(held, t)
			}
		}
		if len(held) > 0 {
			return &exitError{code: 1, err: fmt.Errorf("%s (%s) holds plugin %s's tools %s: take them out of the tools: line of %s first",
				a.Handle, a.ID, c.Name, strings.Join(held, ", "), a.Path)}
		}
	}
	rejected, err := rejectPending(env, c.Name, c.JSON)
	if err != nil {
		return err
	}
	home, err := pluginsHome()
	if err != nil {
		return err
	}
	rec.Remove(c.Name)
	if err := rec.Save(home); err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(env, acted(map[string]any{"name": c.Name, "record": mcp.RecordPath(home), "dir": p.Dir, "rejected": rejected}))
	}
	where := "its server's own files stay where they are"
	if p.Dir != "" {
		where = "its server's own files stay in " + p.Dir
	}
	fmt.Fprintf(env.stdout, "plugin %s removed from %s; %s. %s\n", c.Name, mcp.RecordPath(home), where, restartNote)
	if c.Purge {
		fmt.Fprintf(env.stdout, "--purge: buddi keeps no data of plugin %s (no schema, no files in its home), so it destroys nothing more; the server's own data is its author's format, yours to delete.\n", c.Name)
	}
	return nil
}

// rejectPending rejects every approval pending on the plugin's tools, from the terminal, and
// returns their ids; each is said on its own line unless quiet.
func rejectPending(env *runEnv, name string, quiet bool) ([]string, error) {
	src, err := openActions(env)
	if err != nil {
		return nil, fmt.Errorf("plugin %s is kept: the approvals pending on its tools cannot be rejected without the database: %w", name, err)
	}
	pending, err := action.List(env.ctx, src.Pool, action.Filter{States: []action.State{action.Pending}, Limit: 500})
	closeSource(src)
	if err != nil {
		return nil, err
	}
	ids := []string{}
	for _, r := range pending {
		if strings.HasPrefix(r.Tool, name+".") {
			ids = append(ids, r.ID)
		}
	}
	slices.Sort(ids)
	say := env
	if quiet {
		q := *env
		q.stdout = io.Discard
		say = &q
	}
	for _, id := range ids {
		if err := decide(say, action.Decision{ActionID: id, Reason: "plugin " + name + " was removed"}, false); err != nil {
			var ad *action.AlreadyDecidedError
			if !errors.As(err, &ad) {
				return nil, err
			}
		}
	}
	return ids, nil
}
