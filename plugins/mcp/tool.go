package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"buddi/plugins"
)

// tool is one MCP tool of an installed plugin, as the registry sees it.
type tool struct {
	h      *Host
	plugin Plugin
	t      Tool
}

var (
	_ plugins.Tool             = (*tool)(nil)
	_ plugins.DispatchReporter = (*tool)(nil)
)

// Spec declares the tool as it was accepted: its tier and effects from the manifest or the
// owner, its schema as the server listed it then.
func (t *tool) Spec() plugins.Spec {
	desc := t.t.Description
	if desc == "" {
		desc = t.t.MCPName + " of the " + t.plugin.Name + " plugin."
	}
	return plugins.Spec{Name: t.t.Name, Description: desc, Schema: t.t.Schema, Effects: slices.Clone(t.t.Effects), Tier: t.t.Tier}
}

// Describe renders the call from its arguments alone: which plugin's tool, with what. A
// plugin that was stopped, or a tool that is off, refuses here, before any action exists.
func (t *tool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	if why := t.h.refusal(t.plugin.Name, t.t.MCPName); why != "" {
		return plugins.Envelope{}, errors.New(why)
	}
	var args any
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return plugins.Envelope{}, fmt.Errorf("the arguments are not JSON: %w", err)
	}
	pretty, err := json.MarshalIndent(args, "", "  ")
	if err != nil {
		return plugins.Envelope{}, fmt.Errorf("render the arguments: %w", err)
	}
	return plugins.Envelope{
		Summary: fmt.Sprintf("%s: %s of plugin %s", t.t.Name, t.t.MCPName, t.plugin.Name),
		Effects: slices.Clone(t.t.Effects),
		Targets: []string{"plugin " + t.plugin.Name},
		Detail:  map[string]any{"plugin": t.plugin.Name, "version": t.plugin.Version, "tool": t.t.MCPName, "arguments": args},
		Preview: fmt.Sprintf("Plugin %s (%s) runs its tool %s with:\n%s", t.plugin.Name, t.plugin.Version, t.t.MCPName, pretty),
	}, nil
}

// ReportsDispatch is true: Execute says when the call leaves for the server.
func (t *tool) ReportsDispatch() bool { return true }

// Execute calls the tool on the plugin's server, waiting for a server that is starting
// again. A result the server marks as an error is a tool-error.
func (t *tool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	s, err := t.h.session(ctx, t.plugin.Name, t.t.MCPName)
	if err != nil {
		return plugins.Result{}, err
	}
	if err := plugins.Dispatch(ctx); err != nil {
		return plugins.Result{}, err
	}
	res, err := s.Call(ctx, t.t.MCPName, call.Args)
	var te *ToolError
	if errors.As(err, &te) {
		return res, nil // IsError: the model reads what the server said
	}
	return res, err
}
