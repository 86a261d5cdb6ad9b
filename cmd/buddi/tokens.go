package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"buddi/surfaces/mcpserver"
)

type tokensCmd struct {
	Create tokensCreateCmd `cmd:"" help:"Create an API token for buddi's MCP endpoint (/mcp) and print it once."`
	List   tokensListCmd   `cmd:"" default:"withargs" help:"List the API tokens: name, created, last used (never their value)."`
	Revoke tokensRevokeCmd `cmd:"" help:"Revoke an API token: its next request is refused."`
}

type tokensCreateCmd struct {
	Name     string `arg:"" help:"A name for the token: who or what holds it (letters, digits, dots, dashes, underscores)."`
	ReadOnly bool   `name:"read-only" help:"It may only list the agents and the approvals, not ask an agent."`
	JSON     bool   `name:"json" help:"Print JSON: {\"ok\",\"name\",\"token\",\"read_only\",\"endpoint\"} (the token is shown this once)."`
}

func (c tokensCreateCmd) Run(env *runEnv) error {
	key, src, err := openSealed(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	token, err := mcpserver.Tokens{Q: src.Pool, Key: key}.Create(env.ctx, c.Name, c.ReadOnly)
	if errors.Is(err, mcpserver.ErrExists) || errors.Is(err, mcpserver.ErrBadName) {
		return &exitError{code: 1, err: fmt.Errorf("token %q: %w", c.Name, err)}
	}
	if err != nil {
		return err
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	endpoint := "http://" + cfg.WebAddr() + "/mcp"
	if c.JSON {
		return writeJSON(env, acted(map[string]any{"name": c.Name, "token": token, "read_only": c.ReadOnly, "endpoint": endpoint}))
	}
	fmt.Fprintln(env.stdout, token)
	what := "ask the agents and list the agents and approvals"
	if c.ReadOnly {
		what = "list the agents and approvals (read-only)"
	}
	fmt.Fprintf(env.stderr, "Token %s may %s at %s, sent as \"Authorization: Bearer <token>\".\n"+
		"It is shown this once: buddi keeps only a keyed hash. Revoke it with `buddi tokens revoke %s`.\n", c.Name, what, endpoint, c.Name)
	return nil
}

type tokensListCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c tokensListCmd) Run(env *runEnv) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	list, err := mcpserver.Tokens{Q: src.Pool}.List(env.ctx)
	if err != nil {
		return err
	}
	if c.JSON {
		if list == nil {
			list = []mcpserver.Token{}
		}
		return writeJSON(env, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(env.stdout, "no API tokens: `buddi tokens create NAME` makes one")
		return nil
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tACCESS\tCREATED\tLAST USED\tREVOKED")
	for _, t := range list {
		access, used, revoked := "ask and read", "never", "-"
		if t.ReadOnly {
			access = "read-only"
		}
		if t.LastUsed != nil {
			used = t.LastUsed.Local().Format("2006-01-02 15:04")
		}
		if t.RevokedAt != nil {
			revoked = t.RevokedAt.Local().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Name, access, t.CreatedAt.Local().Format("2006-01-02 15:04"), used, revoked)
	}
	return tw.Flush()
}

type tokensRevokeCmd struct {
	Name string `arg:"" help:"The token's name (see buddi tokens list)."`
	JSON bool   `name:"json" help:"Print JSON: {\"ok\",\"name\"}."`
}

func (c tokensRevokeCmd) Run(env *runEnv) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	err = mcpserver.Tokens{Q: src.Pool}.Revoke(env.ctx, c.Name)
	if errors.Is(err, mcpserver.ErrNoToken) {
		return &exitError{code: 1, err: fmt.Errorf("token %q: %w", c.Name, err)}
	}
	if err != nil {
		return err
	}
	return report(env, c.JSON, acted(map[string]any{"name": c.Name}), "token %s revoked: its next request is refused", c.Name)
}
