package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/jackc/pgx/v5"

	"buddi/core/action"
)

type permissionsCmd struct {
	List   permissionsListCmd   `cmd:"" default:"withargs" help:"List standing permissions."`
	Revoke permissionsRevokeCmd `cmd:"" help:"Revoke a standing permission."`
}

type permissionsListCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c permissionsListCmd) Run(env *runEnv) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	list, err := action.ListStanding(env.ctx, src.Pool)
	if err != nil {
		return err
	}
	names := loadHandles()
	if c.JSON {
		if list == nil {
			list = []action.Standing{}
		}
		return names.writeJSON(env, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(env.stdout, "no standing permissions: every gated call asks you")
		return nil
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tTOOL\tVERSION\tWHERE\tGRANTED\tREVOKED")
	for _, s := range list {
		where, revoked := "all conversations", "-"
		if s.ConversationID != "" {
			where = "conversation " + s.ConversationID
		}
		if s.RevokedAt != nil {
			revoked = s.RevokedAt.Local().Format("2006-01-02 15:04") + " on " + s.RevokedBy
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s on %s\t%s\n", s.ID, names.of(s.Agent), s.Tool, s.ToolVersion, where,
			s.GrantedAt.Local().Format("2006-01-02 15:04"), s.GrantedBy, revoked)
	}
	return tw.Flush()
}

type permissionsRevokeCmd struct {
	ID   int64 `arg:"" help:"The standing permission's id (see buddi permissions list)."`
	JSON bool  `name:"json" help:"Print JSON: {\"ok\",\"id\"}."`
}

func (c permissionsRevokeCmd) Run(env *runEnv) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	err = pgx.BeginFunc(env.ctx, src.Pool, func(tx pgx.Tx) error { return action.Revoke(env.ctx, tx, c.ID, "terminal") })
	if errors.Is(err, action.ErrNotFound) {
		return &exitError{code: 1, err: fmt.Errorf("no live standing permission %d: list them with `buddi permissions list`", c.ID)}
	}
	if err != nil {
		return err
	}
	return report(env, c.JSON, acted(map[string]any{"id": c.ID}), "standing permission %d revoked: the tool asks you again", c.ID)
}
