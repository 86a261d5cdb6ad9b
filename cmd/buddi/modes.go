package main

import (
	"errors"
	"fmt"

	"buddi/core/executor"
	"buddi/core/permission"
)

// agentsModeCmd shows or sets an agent's execution mode (seed 002).
type agentsModeCmd struct {
	Agent string `arg:"" help:"The agent's handle (@dev) or id."`
	Mode  string `arg:"" optional:"" enum:",plan,accept-edits,auto" default:"" help:"plan (reads only), accept-edits (state changes and edits inside the workspace; anything else asks) or auto (the tools' own tiers decide); leave out to show the current one."`
	JSON  bool   `help:"Print JSON."`
}

func (c agentsModeCmd) Run(env *runEnv) error {
	a, err := resolveAgent(c.Agent)
	if err != nil {
		return err
	}
	id := a.ID
	key, src, err := openSealed(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	modes := executor.NewModes(src.Pool, key)
	if c.Mode != "" {
		if _, err := modes.SetMode(env.ctx, id, permission.Mode(c.Mode), "owner:terminal"); err != nil {
			if errors.Is(err, executor.ErrBadMode) {
				return &exitError{code: 2, err: err}
			}
			return err
		}
	}
	m, err := modes.Mode(env.ctx, id)
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(env, struct {
			executor.AgentMode
			Handle string `json:"handle"`
		}{m, a.Handle})
	}
	how := "it applies to the next call"
	if !m.Set {
		how = "the default; set another with `buddi agents mode " + a.Handle + " plan|accept-edits|auto`"
	}
	fmt.Fprintf(env.stdout, "%s is in %s mode; %s\n", a.Handle, m.Mode, how)
	if m.Refused != "" {
		fmt.Fprintf(env.stdout, "The mode on record is refused because %s: set it again with `buddi agents mode %s MODE`.\n", m.Refused, a.Handle)
	}
	return nil
}

// agentModes reads every agent's mode for list and show; the sentence says why they could
// not be read (no database), and the modes are then unknown.
func agentModes(env *runEnv) (map[string]executor.AgentMode, string) {
	key, src, err := openSealed(env)
	if err != nil {
		return nil, err.Error()
	}
	defer closeSource(src)
	all, err := executor.NewModes(src.Pool, key).All(env.ctx)
	if err != nil {
		return nil, err.Error()
	}
	return all, ""
}

// modeWord is an agent's mode for a table: the one on record, the default, or "?" when the
// modes could not be read.
func modeWord(modes map[string]executor.AgentMode, problem, agent string) string {
	if problem != "" {
		return "?"
	}
	if m, ok := modes[agent]; ok {
		return string(m.Mode)
	}
	return string(executor.DefaultMode)
}
