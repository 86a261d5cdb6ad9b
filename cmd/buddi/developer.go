package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"buddi/plugins/developer/runlist"
)

type developerCmd struct {
	Explain developerExplainCmd `cmd:"" help:"Say what the developer agent's run tool would do with a command; nothing is run."`
}

type developerExplainCmd struct {
	Workspace string   `help:"The workspace directory (absolute). With it, neither the server nor the database is needed."`
	Agent     string   `help:"The agent whose remembered commands count." default:"developer"`
	Mode      string   `help:"The mode to judge in." enum:"ask,edit,run" default:"run"`
	Cwd       string   `help:"The directory to run in, inside the workspace."`
	JSON      bool     `help:"Print one JSON object: {\"verdict\",\"reason\",…}."`
	Command   []string `arg:"" passthrough:"" help:"The command, after --, read as one string the way the tool receives it."`
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
	if c.Workspace == "" {
		return &exitError{code: 2, err: errors.New("--workspace is needed: the agent's stored workspace is read once the developer plugin is installed")}
	}
	ws, err := filepath.Abs(c.Workspace)
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("--workspace %s: %w", c.Workspace, err)}
	}
	mode, err := runlist.ParseMode(c.Mode)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	home, _ := os.UserHomeDir()
	protected := append(runlist.HomeProtected(home), cfg.Home)
	// One argument is the command as typed; several are joined with spaces, as a shell would
	// have handed them over.
	command := strings.Join(words, " ")
	v := runlist.Decide(runlist.Input{
		Command: command, Workspace: ws, Cwd: c.Cwd, Mode: mode, Agent: c.Agent,
		FS: runlist.DirFS(ws), Protected: protected,
	})
	if c.JSON {
		return writeJSON(env, explainJSON{Verdict: v.Kind.String(), Reason: v.Reason, Rule: string(v.Rule),
			Program: v.Program, Flag: v.Flag, Argv: v.Argv, Dir: v.Dir})
	}
	fmt.Fprintf(env.stdout, "%s: %s\n", v.Kind, v.Reason)
	return nil
}
