package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"buddi/agents"
	"buddi/app"
	"buddi/dbsource"
	"buddi/migrations"
	"buddi/plugins/developer"
	"buddi/plugins/developer/runlist"
	"buddi/plugins/developer/spawn"
)

type developerCmd struct {
	Workspace developerWorkspaceCmd `cmd:"" help:"Show or set an agent's workspace directory."`
	Mode      developerModeCmd      `cmd:"" help:"Show or set an agent's mode: ask, edit or run."`
	Allowed   developerAllowedCmd   `cmd:"" help:"The commands you allowed the agent to run without a card."`
	Processes developerProcessesCmd `cmd:"" help:"The long-lived processes the agents started."`
	Explain   developerExplainCmd   `cmd:"" help:"Say what the developer agent's run tool would do with a command; nothing is run."`
}

// withAgentStore resolves agent (a handle or id), opens the developer plugin's store, and
// runs fn.
func withAgentStore(env *runEnv, agent string, fn func(a agents.Agent, store *developer.Store) error) error {
	a, err := resolveAgent(agent)
	if err != nil {
		return err
	}
	src, store, err := openDeveloper(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	return fn(a, store)
}

// openDeveloper opens the database and the developer plugin's store.
func openDeveloper(env *runEnv) (*dbsource.Source, *developer.Store, error) {
	key, src, err := openSealed(env)
	if err != nil {
		return nil, nil, err
	}
	sets := app.Schemas(app.Manifests(nil, "", nil))
	sts, err := migrations.Check(env.ctx, src.Pool, sets...)
	if err != nil {
		closeSource(src)
		return nil, nil, err
	}
	for _, st := range sts {
		if st.Pending() {
			closeSource(src)
			return nil, nil, &exitError{code: 3, err: fmt.Errorf("schema %s is not current: run `buddi db migrate`", st.Schema)}
		}
	}
	return src, developer.NewStore(src.Pool, key, nil), nil
}

type developerWorkspaceCmd struct {
	Show developerWorkspaceShowCmd `cmd:"" default:"withargs" help:"Show the agent's workspace."`
	Set  developerWorkspaceSetCmd  `cmd:"" help:"Set the agent's workspace to DIR (you are the owner: no card)."`
}

type developerWorkspaceShowCmd struct {
	Agent string `help:"The agent (handle or id)." default:"@dev"`
	JSON  bool   `help:"Print JSON."`
}

func (c developerWorkspaceShowCmd) Run(env *runEnv) error {
	return withAgentStore(env, c.Agent, func(a agents.Agent, store *developer.Store) error {
		id := a.ID
		w, found, err := store.Workspace(env.ctx, id)
		if err != nil {
			return err
		}
		mode, err := store.Mode(env.ctx, id)
		if err != nil {
			return err
		}
		if c.JSON {
			out := map[string]any{"agent": id, "agent_handle": a.Handle, "workspace": nullable(found, w), "mode": mode}
			if w.Refused != "" {
				out["refused"] = map[string]string{"directory": w.Directory, "reason": w.Refused}
			}
			return writeJSON(env, out)
		}
		if !found && w.Refused != "" {
			fmt.Fprintf(env.stdout, "%s has no workspace (mode %s): the one on record, %s, is refused because %s; set it again with `buddi developer workspace set --agent %s DIR`\n",
				a.Handle, mode, w.Directory, w.Refused, a.Handle)
			return nil
		}
		if !found {
			fmt.Fprintf(env.stdout, "%s has no workspace (mode %s): set one with `buddi developer workspace set --agent %s DIR`\n", a.Handle, mode, a.Handle)
			return nil
		}
		fmt.Fprintf(env.stdout, "%s works in %s (mode %s), set %s by %s\n", a.Handle, w.Directory, mode, w.SetAt.Local().Format("2006-01-02 15:04"), w.SetBy)
		return nil
	})
}

func nullable(ok bool, v any) any {
	if !ok {
		return nil
	}
	return v
}

type developerWorkspaceSetCmd struct {
	Agent string `help:"The agent (handle or id)." default:"@dev"`
	Dir   string `arg:"" help:"The workspace directory."`
	JSON  bool   `name:"json" help:"Print JSON: {\"ok\",\"agent\",\"agent_handle\",\"directory\"}."`
}

func (c developerWorkspaceSetCmd) Run(env *runEnv) error {
	a, err := resolveAgent(c.Agent)
	if err != nil {
		return err
	}
	id := a.ID
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if _, err := (developer.Deps{DataDir: cfg.Home}).Root(dir); err != nil {
		return &exitError{code: 1, err: err}
	}
	src, store, err := openDeveloper(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	w, err := store.SetWorkspace(env.ctx, id, dir, "owner:terminal", spawn.Capture(os.Environ()).Path)
	if err != nil {
		return err
	}
	return report(env, c.JSON, acted(map[string]any{"agent": id, "agent_handle": a.Handle, "directory": w.Directory}),
		"%s now works in %s", a.Handle, w.Directory)
}

type developerModeCmd struct {
	Agent string `help:"The agent (handle or id)." default:"@dev"`
	Mode  string `arg:"" optional:"" enum:",ask,edit,run" default:"" help:"ask, edit or run; leave out to show the current one."`
	JSON  bool   `name:"json" help:"Print JSON: {\"agent\",\"agent_handle\",\"mode\",\"refused\"}."`
}

func (c developerModeCmd) Run(env *runEnv) error {
	return withAgentStore(env, c.Agent, func(a agents.Agent, store *developer.Store) error {
		id := a.ID
		if c.Mode != "" {
			mode, err := runlist.ParseMode(c.Mode)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			if err := store.SetMode(env.ctx, id, mode); err != nil {
				return err
			}
		}
		mode, refused, err := store.ReadMode(env.ctx, id)
		if err != nil {
			return err
		}
		if c.JSON {
			return writeJSON(env, map[string]any{"agent": id, "agent_handle": a.Handle, "mode": mode, "refused": refused})
		}
		fmt.Fprintf(env.stdout, "%s is in %s mode; it applies to the next call\n", a.Handle, mode)
		if refused != "" {
			fmt.Fprintf(env.stdout, "The mode on record is refused because %s: set it again with `buddi developer mode --agent %s MODE`.\n", refused, a.Handle)
		}
		return nil
	})
}

type developerAllowedCmd struct {
	List   developerAllowedListCmd   `cmd:"" default:"withargs" help:"List the commands you allowed."`
	Forget developerAllowedForgetCmd `cmd:"" help:"Forget one: it asks again."`
}

type developerAllowedListCmd struct {
	Agent string `help:"The agent (handle or id)." default:"@dev"`
	JSON  bool   `help:"Print JSON."`
}

func (c developerAllowedListCmd) Run(env *runEnv) error {
	return withAgentStore(env, c.Agent, func(a agents.Agent, store *developer.Store) error {
		list, err := store.ListRemembered(env.ctx, a.ID)
		if err != nil {
			return err
		}
		if c.JSON {
			out := make([]allowedJSON, len(list))
			for i, r := range list {
				out[i] = allowedJSON{ID: r.ID, Agent: r.Agent, AgentHandle: a.Handle, Workspace: r.Workspace, Argv: r.Argv, Prefix: r.Prefix,
					CreatedAt: r.CreatedAt, Refused: r.Refused}
			}
			return writeJSON(env, out)
		}
		if len(list) == 0 {
			fmt.Fprintln(env.stdout, "no commands allowed: every command off the run list asks you")
			return nil
		}
		refused := 0
		for _, r := range list {
			kind := "exactly"
			if r.Prefix {
				kind = "and anything after it"
			}
			note := ""
			if r.Refused != "" {
				note, refused = "  NOT SEALED: allows nothing", refused+1
			}
			fmt.Fprintf(env.stdout, "%d  %s  (%s) in %s%s\n", r.ID, strings.Join(r.Argv, " "), kind, r.Workspace, note)
		}
		if refused > 0 {
			fmt.Fprintln(env.stdout, "A command that is not sealed was allowed by an earlier buddi or written into the database: it asks again on its next card; forget it with `buddi developer allowed forget ID`.")
		}
		return nil
	})
}

// allowedJSON is a command the owner allowed, as developer allowed list --json prints it.
type allowedJSON struct {
	ID          int64     `json:"id"`
	Agent       string    `json:"agent"`
	AgentHandle string    `json:"agent_handle"`
	Workspace   string    `json:"workspace"`
	Argv        []string  `json:"argv"`
	Prefix      bool      `json:"prefix"` // anything after argv matches too
	CreatedAt   time.Time `json:"created_at"`
	Refused     string    `json:"refused,omitempty"` // why it is not honoured: buddi did not seal it
}

type developerAllowedForgetCmd struct {
	ID   int64 `arg:"" help:"The id from buddi developer allowed list."`
	JSON bool  `name:"json" help:"Print JSON: {\"ok\",\"id\"}."`
}

func (c developerAllowedForgetCmd) Run(env *runEnv) error {
	src, store, err := openDeveloper(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	if err := store.Forget(env.ctx, c.ID); err != nil {
		if errors.Is(err, developer.ErrNotRemembered) {
			return &exitError{code: 1, err: fmt.Errorf("no allowed command %d: list them with `buddi developer allowed list`", c.ID)}
		}
		return err
	}
	return report(env, c.JSON, acted(map[string]any{"id": c.ID}), "forgot %d: that command asks you again", c.ID)
}

type developerExplainCmd struct {
	Workspace string   `help:"The workspace directory. With it, neither the server nor the database is needed; without it, the agent's stored workspace, mode and allowed commands are used."`
	Agent     string   `help:"The agent (handle or id)." default:"@dev"`
	Mode      string   `help:"The mode to judge in (default: the agent's, or run with --workspace)." enum:",ask,edit,run" default:""`
	Cwd       string   `help:"The directory to run in, inside the workspace."`
	JSON      bool     `help:"Print one JSON object: {\"verdict\",\"reason\",…}."`
	Command   []string `arg:"" passthrough:"" help:"The command, after --, read as one string the way the tool receives it."`
}

// fromRecord fills in the agent's stored workspace, mode and allowed commands.
func (c developerExplainCmd) fromRecord(env *runEnv, in *runlist.Input) error {
	id, err := agentID(c.Agent)
	if err != nil {
		return err
	}
	src, store, err := openDeveloper(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	in.Agent = id
	w, found, err := store.Workspace(env.ctx, id)
	if err != nil {
		return err
	}
	if in.Mode, err = store.Mode(env.ctx, id); err != nil {
		return err
	}
	if !found {
		return nil // the run list says what a command gets with no workspace
	}
	in.Workspace = w.Directory
	in.Remembered, err = store.RememberedFor(env.ctx, id, w.Directory)
	return err
}

// explainJSON is what --json prints.
type explainJSON struct {
	Verdict string   `json:"verdict"`
	Reason  string   `json:"reason"`
	Rule    string   `json:"rule,omitempty"`
	Program string   `json:"program,omitempty"`
	Flag    string   `json:"flag,omitempty"`
	Argv    []string `json:"argv,omitempty"`
	Dir     string   `json:"dir,omitempty"`
}

func (c developerExplainCmd) Run(env *runEnv) error {
	words := c.Command
	if len(words) > 0 && words[0] == "--" {
		words = words[1:]
	}
	if len(words) == 0 {
		return &exitError{code: 2, err: errors.New("give the command after --, e.g. buddi developer explain --workspace ~/code/app -- \"npm test\"")}
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	in := runlist.Input{Mode: runlist.ModeRun}
	if c.Workspace != "" {
		if in.Workspace, err = filepath.Abs(c.Workspace); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--workspace %s: %w", c.Workspace, err)}
		}
	} else if err := c.fromRecord(env, &in); err != nil {
		return err
	}
	if c.Mode != "" {
		if in.Mode, err = runlist.ParseMode(c.Mode); err != nil {
			return &exitError{code: 2, err: err}
		}
	}
	ws := in.Workspace
	// The same protected paths the run tool is given: the workspace's confinement's.
	var protected []string
	if ws != "" {
		root, err := (developer.Deps{DataDir: cfg.Home}).Root(ws)
		if err != nil {
			return &exitError{code: 1, err: err}
		}
		protected = root.Protected()
		in.Root = root // paths resolve as the run tool resolves them: no link on the way
	}
	// One argument is the command as typed; several are joined with spaces, as a shell would
	// have handed them over.
	command := strings.Join(words, " ")
	in.Command, in.Cwd, in.Protected = command, c.Cwd, protected
	if ws != "" {
		in.FS = runlist.DirFS(ws)
	}
	v := runlist.Decide(in)
	if c.JSON {
		return writeJSON(env, explainJSON{Verdict: v.Kind.String(), Reason: v.Reason, Rule: string(v.Rule),
			Program: v.Program, Flag: v.Flag, Argv: v.Argv, Dir: v.Dir})
	}
	fmt.Fprintf(env.stdout, "%s: %s\n", v.Kind, v.Reason)
	return nil
}

type developerProcessesCmd struct {
	List    developerProcessesListCmd    `cmd:"" default:"withargs" help:"List the running processes."`
	Stop    developerProcessesStopCmd    `cmd:"" help:"Stop one process by name."`
	StopAll developerProcessesStopAllCmd `cmd:"" name:"stop-all" help:"Stop every process of the agent."`
}

type developerProcessesListCmd struct {
	Agent string `help:"Only this agent's (handle or id); default all."`
	JSON  bool   `help:"Print JSON."`
}

func (c developerProcessesListCmd) Run(env *runEnv) error {
	id := ""
	if c.Agent != "" {
		var err error
		if id, err = agentID(c.Agent); err != nil {
			return err
		}
	}
	src, store, err := openDeveloper(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	list, err := store.Processes(env.ctx, id)
	if err != nil {
		return err
	}
	names := loadHandles()
	if c.JSON {
		if list == nil {
			list = []developer.Process{}
		}
		return names.writeJSON(env, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(env.stdout, "no processes running")
		return nil
	}
	for _, p := range list {
		state := "running"
		switch {
		case p.State == "gave_up":
			state = "gave up"
		case p.State == "restarting":
			state = "restarting"
		case !p.Running:
			state = "exited"
		}
		fmt.Fprintf(env.stdout, "%-16s %-10s %-10s pid %-7d %s  (log %s)\n", p.Name, names.of(p.Agent), state, p.Pid, strings.Join(p.Argv, " "), p.LogPath)
		if p.Note != "" && !p.Running {
			fmt.Fprintf(env.stdout, "  %s\n", p.Note)
		}
	}
	return nil
}

type developerProcessesStopCmd struct {
	Name  string `arg:"" help:"The process's name."`
	Agent string `help:"The agent (handle or id)." default:"@dev"`
	JSON  bool   `name:"json" help:"Print JSON: {\"ok\",\"name\",\"agent\",\"agent_handle\"}."`
}

func (c developerProcessesStopCmd) Run(env *runEnv) error {
	return withAgentStore(env, c.Agent, func(a agents.Agent, store *developer.Store) error {
		if err := store.StopProcess(env.ctx, a.ID, c.Name); err != nil {
			if errors.Is(err, developer.ErrNoProcess) {
				return &exitError{code: 1, err: fmt.Errorf("%w: list them with `buddi developer processes`", err)}
			}
			return err
		}
		return report(env, c.JSON, acted(map[string]any{"name": c.Name, "agent": a.ID, "agent_handle": a.Handle}), "stopped %s", c.Name)
	})
}

type developerProcessesStopAllCmd struct {
	Agent string `help:"The agent (handle or id)." default:"@dev"`
	JSON  bool   `name:"json" help:"Print JSON: {\"ok\",\"agent\",\"agent_handle\",\"stopped\"}, stopped being the names."`
}

func (c developerProcessesStopAllCmd) Run(env *runEnv) error {
	return withAgentStore(env, c.Agent, func(a agents.Agent, store *developer.Store) error {
		list, err := store.Processes(env.ctx, a.ID)
		if err != nil {
			return err
		}
		stopped := []string{}
		for _, p := range list {
			if err := store.StopProcess(env.ctx, a.ID, p.Name); err != nil && !errors.Is(err, developer.ErrNoProcess) {
				return err
			}
			stopped = append(stopped, p.Name)
		}
		return report(env, c.JSON, acted(map[string]any{"agent": a.ID, "agent_handle": a.Handle, "stopped": stopped}),
			"stopped %d processes of %s", len(list), a.Handle)
	})
}
