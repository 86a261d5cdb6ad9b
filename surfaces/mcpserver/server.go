package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"buddi/agents"
	"buddi/core/conversation"
	"buddi/runtime/live"
	"buddi/surfaces/webauth"
	"buddi/version"
)

// Deps are what the tools read and write through. Every field but Log, DefaultWait and
// MaxWait is required.
type Deps struct {
	// Tokens checks the API tokens presented at /mcp.
	Tokens Tokens
	// CLIToken is the command line's token (webauth.CLIToken), which `buddi mcp` presents; empty
	// accepts none.
	CLIToken string
	// Pool is the application's database: the approvals, and the callers' conversations.
	Pool *pgxpool.Pool
	// Catalog loads the agents.
	Catalog func() (*agents.Catalog, error)
	// Available says whether an agent can run now, and if not, why, in one sentence.
	Available func(ctx context.Context, agent string) (bool, string)
	// Conversations writes the callers' messages.
	Conversations *conversation.Store
	// Start enqueues the run that answers a message, as a run of surface "mcp" that somebody
	// waits on (run.Runner.StartNow with run.Meta{Surface: "mcp", Interactive: true}).
	Start conversation.StartRun
	// Deliver starts that run at once (run.Runner.Deliver); nil leaves it to its job.
	Deliver func(ctx context.Context, sent conversation.Sent)
	// Live is where the runs' events are followed until they end.
	Live *live.Hub
	// Log receives what the server logs, tagged service=mcp. Default: discard.
	Log *slog.Logger
	// DefaultWait is how long ask_agent waits for a run when the caller names no wait.
	// Default 2 minutes.
	DefaultWait time.Duration
	// MaxWait bounds the wait a caller may ask for. Default 10 minutes.
	MaxWait time.Duration
}

// Caller is who presented the credential of a request.
type Caller struct {
	// Token is the API token's name; empty for the command line's `buddi mcp`.
	Token string
	// ReadOnly limits the caller to the read tools.
	ReadOnly bool
	// Owner is what the conversations ask_agent starts are recorded under: the token's keyed
	// hash ("token:…"), so a new token that takes a revoked one's name holds none of them;
	// empty for the command line's.
	Owner string
}

// String names the caller in logs and in the SDK's session checks.
func (c Caller) String() string {
	if c.Token == "" {
		return "buddi mcp (the command line)"
	}
	return "token " + c.Token
}

// callerKey is the key of the Caller in an auth.TokenInfo's Extra.
const callerKey = "buddi.caller"

// callerOf returns the caller of a tool call; ok is false when the request carried none
// (which the HTTP handler never lets through).
func callerOf(req *mcp.CallToolRequest) (Caller, bool) {
	if req == nil || req.Extra == nil || req.Extra.TokenInfo == nil {
		return Caller{}, false
	}
	c, ok := req.Extra.TokenInfo.Extra[callerKey].(Caller)
	return c, ok
}

// Handler is the streamable HTTP endpoint buddi serve mounts at /mcp on loopback. Every
// request needs "Authorization: Bearer <token>": an API token that works, or the command
// line's token; anything else is a 401 and nothing else. Each request stands alone
// (stateless), so a revoked token stops at its next request. The SDK refuses a loopback
// request whose Host is not a loopback name (DNS rebinding), and a browser's cross-origin
// request is refused.
func Handler(d Deps) http.Handler {
	d = d.withDefaults()
	full, readOnly := newServer(d, false), newServer(d, true)
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		info := auth.TokenInfoFromContext(r.Context())
		if info == nil {
			return nil
		}
		if c, _ := info.Extra[callerKey].(Caller); c.ReadOnly {
			return readOnly
		}
		return full
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: sdkLog(d.Log)})
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		var c Caller
		if webauth.SameToken(token, d.CLIToken) {
			c = Caller{}
		} else {
			tk, found, err := d.Tokens.Check(ctx, token)
			if err != nil {
				d.Log.Warn("an API token could not be checked", "err", err)
				return nil, errors.New("the token could not be checked: the database is not answering")
			}
			if !found {
				return nil, auth.ErrInvalidToken
			}
			c = Caller{Token: tk.Name, ReadOnly: tk.ReadOnly, Owner: "token:" + tk.Hash}
		}
		return &auth.TokenInfo{UserID: c.String(), Expiration: time.Now().Add(time.Hour), Extra: map[string]any{callerKey: c}}, nil
	}
	return auth.RequireBearerToken(verify, nil)(http.NewCrossOriginProtection().Handler(h))
}

func (d Deps) withDefaults() Deps {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	d.Log = d.Log.With("service", "mcp")
	if d.DefaultWait <= 0 {
		d.DefaultWait = 2 * time.Minute
	}
	if d.MaxWait <= 0 {
		d.MaxWait = 10 * time.Minute
	}
	return d
}

// newServer builds the MCP server with the tools a caller may use: the read tools, and
// ask_agent unless readOnly.
func newServer(d Deps, readOnly bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "buddi", Version: version.Version}, &mcp.ServerOptions{
		Instructions: "buddi is its owner's personal agent platform. agents_list names the agents; ask_agent asks one " +
			"something and returns its reply; approvals_list shows what waits for the owner's decision. Whatever " +
			"would change something waits for the owner's approval on their own surfaces; you cannot approve it.",
		Logger: sdkLog(d.Log),
	})
	t := tools{d: d}
	mcp.AddTool(s, &mcp.Tool{Name: "agents_list", Description: "List the owner's agents: id, handle, name, and whether each can run now (and if not, why).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, t.agentsList)
	mcp.AddTool(s, &mcp.Tool{Name: "approvals_list", Description: "List what waits for the owner's decision, one summary each. The owner decides on their own surfaces; nothing here approves.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, t.approvalsList)
	if !readOnly {
		f := false
		mcp.AddTool(s, &mcp.Tool{Name: "ask_agent", Description: "Send a message to one of the owner's agents and wait for its reply. " +
			"The first call starts a conversation of your own and returns its conversation_id; pass it again to carry on. " +
			"A reply that stops at an approval says what waits for the owner; call again later with the conversation_id " +
			"(a message is optional then) to read how it went.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: &f, OpenWorldHint: &f}}, t.askAgent)
	}
	return s
}

// sdkLog is log for the SDK, which notes every session at info, and every request is one
// (stateless): only its warnings and errors are kept.
func sdkLog(log *slog.Logger) *slog.Logger { return slog.New(warnings{log.Handler()}) }

// warnings passes on the records of warning level and above.
type warnings struct{ slog.Handler }

func (w warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

func (w warnings) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warnings{w.Handler.WithAttrs(attrs)}
}

func (w warnings) WithGroup(name string) slog.Handler { return warnings{w.Handler.WithGroup(name)} }
