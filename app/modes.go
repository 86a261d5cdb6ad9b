package app

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/conversation"
	"buddi/core/executor"
	"buddi/core/permission"
	"buddi/core/seal"
	"buddi/plugins"
	"buddi/surfaces/telegram"
)

// agentModes gives an agent's execution mode as the owner set it (*executor.Modes), read
// from the database at every call.
type agentModes interface {
	// Mode returns agent's mode: the one on record, executor.DefaultMode without one, plan
	// for a record buddi did not seal.
	Mode(ctx context.Context, agent string) (executor.AgentMode, error)
}

// remoteSurface names the remote caller a call comes from, for seed 002's remote clamp: a
// run asked through buddi mcp (call.Remote), or from Telegram, where whoever holds the
// paired phone writes; "" for the owner's own surfaces (the dashboard on this machine, the
// terminal) and for unattended work.
func remoteSurface(call plugins.Call) string {
	switch {
	case call.Remote || call.Surface == conversation.SurfaceMCP:
		return "buddi mcp"
	case call.Surface == telegram.Surface:
		return "Telegram"
	}
	return ""
}

// withMode sets agent's execution mode for call: the owner's mode for the agent, read now
// (executor.DefaultMode when modes is nil or the call names no agent), with the sentence a
// mode block ends with.
func withMode(ctx context.Context, modes agentModes, call plugins.Call, agent permission.Agent) (permission.Agent, error) {
	agent.ExecutionMode = executor.DefaultMode
	if modes == nil || call.Agent == "" {
		return agent, nil
	}
	m, err := modes.Mode(ctx, call.Agent)
	if err != nil {
		return agent, err
	}
	agent.ExecutionMode, agent.ModeNote = m.Mode, executor.ModeNote(call.Agent, m.Mode, "")
	return agent, nil
}

// clampRemote lowers agent's mode for a call from a remote caller as seed 002's remote rules
// say (permission.ApplyRemoteMode with no request): to remote_max_mode, which defaults to
// remote_default_mode, accept-edits. A call that is not remote is returned as it is.
func clampRemote(call plugins.Call, agent permission.Agent, s permission.Settings) permission.Agent {
	surface := remoteSurface(call)
	if surface == "" {
		return agent
	}
	before := agent.ExecutionMode
	agent = permission.ApplyRemoteMode(agent, "", s.Remote)
	if permission.Rank(agent.ExecutionMode) < permission.Rank(before) {
		agent.ModeNote = executor.ModeNote(call.Agent, agent.ExecutionMode, surface)
	}
	return agent
}

// modeStore is the agents' modes over pool, sealed with key, logging refused rows to log.
func modeStore(pool *pgxpool.Pool, key seal.Key, log *slog.Logger) *executor.Modes {
	m := executor.NewModes(pool, key)
	m.Log = log
	return m
}

// telegramMode reads an agent's mode for Telegram's /agents.
func telegramMode(m agentModes) func(ctx context.Context, agent string) (string, error) {
	return func(ctx context.Context, agent string) (string, error) {
		got, err := m.Mode(ctx, agent)
		return string(got.Mode), err
	}
}
