package app

import (
	"context"
	"net/http"

	"buddi/core/conversation"
	"buddi/runtime/run"
	"buddi/surfaces/mcpserver"
)

// mcpHandler is buddi mcp's endpoint, which the loopback dashboard serves at /mcp: its runs
// are of surface "mcp", a remote caller's (run.Remote), that somebody waits on.
func (w *wired) mcpHandler() http.Handler {
	runner := w.runner
	meta := run.Meta{Surface: conversation.SurfaceMCP, Interactive: true}
	return mcpserver.Handler(mcpserver.Deps{
		Tokens: mcpserver.Tokens{Q: w.src.Pool, Key: w.seal}, CLIToken: w.cliToken, Pool: w.src.Pool,
		Catalog: w.catalog, Conversations: w.convs, Live: w.hub, Log: w.log,
		Available: func(ctx context.Context, agent string) (bool, string) {
			p, err := runner.Check(ctx, w.secrets, agent)
			if err != nil {
				return false, "its account could not be read"
			}
			if p != nil {
				return false, p.Sentence
			}
			return true, ""
		},
		Start: runner.StartNow(meta),
		Deliver: func(ctx context.Context, sent conversation.Sent) {
			runner.Deliver(ctx, run.StartArgs{RunID: sent.RunID, ConversationID: sent.Conversation.ID, Agent: sent.Conversation.Agent,
				Surface: meta.Surface, Interactive: meta.Interactive})
		},
	})
}
