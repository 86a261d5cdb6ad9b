package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/actors"
	"buddi/core/conversation"
	"buddi/core/redact"
	"buddi/plugins"
	"buddi/runtime/run"
	"buddi/scheduler"
	"buddi/sources"
)

// sourceStarter starts a run a source asked for: the agent (or the holder of "role:<name>",
// resolved at each run) in a conversation of its own, unattended, with the source's prompt.
// A source notifies nobody: the agent decides whether the owner hears of it.
func sourceStarter(convs *conversation.Store, runner *run.Runner) sources.Starter {
	return func(ctx context.Context, source, agent, prompt string, claim conversation.Claim) (string, error) {
		if role, ok := strings.CutPrefix(agent, "role:"); ok {
			cat, err := runner.Catalog()
			if err != nil {
				return "", err
			}
			holder, err := cat.ForRole(role)
			if err != nil {
				return "", err
			}
			agent = holder.ID
		}
		text := fmt.Sprintf("The source %s asks you to handle this.\n\n%s\n\n"+
			"When it is done, report what the owner should know in a few sentences (mission.report), or stay silent with a reason (mission.silent).",
			source, prompt)
		sent, err := convs.StartDetached(ctx, agent, text, runner.StartNext(run.Meta{Interactive: false}), claim)
		if err != nil {
			return "", err
		}
		return sent.RunID, nil
	}
}

// sourceActors are root/sources' children: one actor per source of the manifests, polling
// when its ledger says it is due and starting the runs it asks for through sourceStarter. A
// source that keeps failing is told to the owner through tell.
func sourceActors(manifests []plugins.Manifest, pool *pgxpool.Pool, convs *conversation.Store, runner *run.Runner,
	tell scheduler.Tell, scrub redact.Scrubber, log *slog.Logger) ([]actors.Child, error) {
	entries, err := sources.Of(manifests)
	if err != nil {
		return nil, fmt.Errorf("load sources: %w", err)
	}
	e := &sources.Engine{Pool: pool, Start: sourceStarter(convs, runner), Tell: sources.Tell(tell), Scrub: scrub, Log: log}
	return sources.Children(e, sources.Sources(entries), sources.Loop), nil
}
