package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"buddi/agents"
	"buddi/examples"
)

type agentsCmd struct {
	List agentsListCmd `cmd:"" default:"withargs" help:"List the agents: the shipped examples and yours."`
	Show agentsShowCmd `cmd:"" help:"Show one agent: its grant, roles, skills and persona."`
}

// loadCatalog loads the agents from the shipped examples and the owner's directories.
func loadCatalog() (*agents.Catalog, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	agentsDir, skillsDir := agents.OwnerDirs(cfg.Home, os.Getenv)
	return agents.Load(agents.Config{Examples: examples.FS, AgentsDir: agentsDir, SkillsDir: skillsDir})
}

type agentsListCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c agentsListCmd) Run(env *runEnv) error {
	cat, err := loadCatalog()
	if err != nil {
		return err
	}
	all := cat.All()
	if c.JSON {
		return writeJSON(env, all)
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HANDLE\tID\tNAME\tROLES\tTOOLS\tSOURCE")
	for _, a := range all {
		handle := a.Handle
		if a.Default {
			handle += " (default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", handle, a.ID, a.Name, strings.Join(a.Roles, ","), len(a.Tools), a.Source)
	}
	return tw.Flush()
}

type agentsShowCmd struct {
	Agent string `arg:"" help:"The agent's handle (@dev) or id."`
	JSON  bool   `help:"Print JSON."`
}

func (c agentsShowCmd) Run(env *runEnv) error {
	cat, err := loadCatalog()
	if err != nil {
		return err
	}
	a, ok := cat.ByHandle(c.Agent)
	if !ok {
		a, ok = cat.ByID(c.Agent)
	}
	if !ok {
		return &exitError{code: 1, err: fmt.Errorf("no agent %q: list them with `buddi agents list`", c.Agent)}
	}
	if c.JSON {
		return writeJSON(env, a)
	}
	fmt.Fprintf(env.stdout, "%s %s (%s), from %s\n", a.Handle, a.Name, a.ID, a.Path)
	fmt.Fprintf(env.stdout, "roles:  %s\ntools:  %s\nskills: ", orNone(a.Roles), orNone(a.Tools))
	var skills []string
	for _, s := range a.Loaded {
		skills = append(skills, s.Name)
	}
	fmt.Fprintf(env.stdout, "%s\n\n%s\n", orNone(skills), strings.TrimSpace(a.Persona))
	return nil
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
