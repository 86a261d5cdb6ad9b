package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"buddi/agents"
	"buddi/core/action"
	"buddi/core/conversation"
	"buddi/internal/text"
)

// tools are the MCP tools' handlers.
type tools struct{ d Deps }

// Outcome states of ask_agent.
const (
	StatusFinished = "finished"          // the run ended with a reply
	StatusFailed   = "failed"            // the run ended without one; Text says why
	StatusWaiting  = "waiting_for_owner" // the run stopped at approvals the owner decides
	StatusWorking  = "working"           // the wait ran out while the run worked on
)

type agentOut struct {
	ID      string `json:"id" jsonschema:"the agent's id"`
	Handle  string `json:"handle" jsonschema:"how to name it in ask_agent, like @dev"`
	Name    string `json:"name" jsonschema:"its display name"`
	Default bool   `json:"default,omitempty" jsonschema:"it answers when ask_agent names no agent"`
	CanRun  bool   `json:"can_run" jsonschema:"whether it can answer now"`
	WhyNot  string `json:"why_not,omitempty" jsonschema:"why it cannot, when it cannot"`
}

type agentsOut struct {
	Agents []agentOut `json:"agents"`
}

func (t tools) agentsList(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, agentsOut, error) {
	cat, err := t.d.Catalog()
	if err != nil {
		return nil, agentsOut{}, fmt.Errorf("the agents could not be loaded: %w", err)
	}
	out := agentsOut{Agents: []agentOut{}}
	var lines []string
	for _, a := range cat.All() {
		ok, why := t.d.Available(ctx, a.ID)
		out.Agents = append(out.Agents, agentOut{ID: a.ID, Handle: a.Handle, Name: a.Name, Default: a.Default, CanRun: ok, WhyNot: why})
		line := a.Handle + " (" + a.Name + "): "
		if ok {
			line += "can run"
		} else {
			line += "cannot run: " + why
		}
		lines = append(lines, line)
	}
	return textResult(strings.Join(lines, "\n")), out, nil
}

type approvalOut struct {
	ID        string    `json:"id" jsonschema:"the approval's id"`
	Tool      string    `json:"tool" jsonschema:"the tool that waits"`
	Agent     string    `json:"agent" jsonschema:"the agent whose run proposed it"`
	Summary   string    `json:"summary" jsonschema:"what it would do, in one line"`
	CreatedAt time.Time `json:"created_at" jsonschema:"when it was proposed"`
	ExpiresAt time.Time `json:"expires_at" jsonschema:"when it expires undecided"`
}

type approvalsOut struct {
	Approvals []approvalOut `json:"approvals"`
}

func approvalOf(rec action.Record) approvalOut {
	return approvalOut{ID: rec.ID, Tool: rec.Tool, Agent: rec.Agent, Summary: rec.Envelope.Summary, CreatedAt: rec.CreatedAt, ExpiresAt: rec.ExpiresAt}
}

// pending lists the approvals that wait for the owner, newest first, those of runID only
// when it is set.
func (t tools) pending(ctx context.Context, runID string) ([]approvalOut, error) {
	recs, err := action.List(ctx, t.d.Pool, action.Filter{States: []action.State{action.Pending}, Limit: 200})
	if err != nil {
		return nil, err
	}
	out := []approvalOut{}
	for _, rec := range recs {
		if runID == "" || rec.RunID == runID {
			out = append(out, approvalOf(rec))
		}
	}
	return out, nil
}

func (t tools) approvalsList(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, approvalsOut, error) {
	list, err := t.pending(ctx, "")
	if err != nil {
		return nil, approvalsOut{}, fmt.Errorf("the approvals could not be read: %w", err)
	}
	if len(list) == 0 {
		return textResult("Nothing waits for the owner's decision."), approvalsOut{Approvals: list}, nil
	}
	lines := make([]string, len(list))
	for i, a := range list {
		lines[i] = fmt.Sprintf("%s (%s, %s): %s", a.ID, a.Agent, a.Tool, a.Summary)
	}
	return textResult(strings.Join(lines, "\n")), approvalsOut{Approvals: list}, nil
}

type askIn struct {
	Agent          string `json:"agent,omitempty" jsonschema:"the agent's handle (like @dev) or id; the default agent when left out; ignored with conversation_id"`
	Message        string `json:"message,omitempty" jsonschema:"what to say to the agent; optional with conversation_id, and then the call reads how the conversation's last turn went"`
	ConversationID string `json:"conversation_id,omitempty" jsonschema:"a conversation ask_agent started for you, to carry on in"`
	WaitSeconds    int    `json:"wait_seconds,omitempty" jsonschema:"how long to wait for the reply, in seconds (1 to 600; default 120)"`
}

type askOut struct {
	ConversationID string        `json:"conversation_id" jsonschema:"your conversation: pass it again to carry on"`
	RunID          string        `json:"run_id,omitempty" jsonschema:"the run that answers"`
	Agent          string        `json:"agent" jsonschema:"the agent's id"`
	Status         string        `json:"status" jsonschema:"finished, failed, waiting_for_owner or working"`
	Text           string        `json:"text,omitempty" jsonschema:"the agent's reply, or why there is none"`
	Approvals      []approvalOut `json:"approvals,omitempty" jsonschema:"what waits for the owner's decision, when the status is waiting_for_owner"`
}

// refusal is a tool error the caller reads: a sentence, not a fault.
type refusal string

func (r refusal) Error() string { return string(r) }

func (t tools) askAgent(ctx context.Context, req *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, askOut, error) {
	c, ok := callerOf(req)
	if !ok {
		return nil, askOut{}, refusal("this call carries no credential")
	}
	if c.ReadOnly {
		return nil, askOut{}, refusal("this token is read-only: it may list the agents and the approvals, not ask an agent")
	}
	wait := t.d.DefaultWait
	if in.WaitSeconds > 0 {
		wait = min(time.Duration(in.WaitSeconds)*time.Second, t.d.MaxWait)
	}
	msg := strings.TrimSpace(in.Message)
	var conv conversation.Conversation
	var sent conversation.Sent
	switch {
	case in.ConversationID != "":
		var err error
		if conv, err = t.own(ctx, c, in.ConversationID); err != nil {
			return nil, askOut{}, err
		}
		if msg == "" {
			out, err := t.latest(ctx, conv, wait)
			return result(out), out, err
		}
		if err := t.canRun(ctx, conv.Agent); err != nil {
			return nil, askOut{}, err
		}
		sent, err = t.d.Conversations.Send(ctx, conversation.Message{ConversationID: conv.ID, Resume: true, Agent: conv.Agent,
			Surface: conversation.SurfaceMCP, Text: msg}, t.d.Start)
		if err != nil {
			return nil, askOut{}, fmt.Errorf("the message could not be written: %w", err)
		}
	default:
		if msg == "" {
			return nil, askOut{}, refusal("write a message: it is optional only with a conversation_id")
		}
		a, err := t.agent(in.Agent)
		if err != nil {
			return nil, askOut{}, err
		}
		if err := t.canRun(ctx, a.ID); err != nil {
			return nil, askOut{}, err
		}
		sent, err = t.d.Conversations.StartApart(ctx, conversation.SurfaceMCP, a.ID, msg, t.d.Start, func(ctx context.Context, tx pgx.Tx, runID string) error {
			return t.claim(ctx, tx, c, runID)
		})
		if err != nil {
			return nil, askOut{}, fmt.Errorf("the conversation could not be started: %w", err)
		}
		conv = sent.Conversation
	}
	t.d.Log.Info("an MCP caller asked an agent", "caller", c.String(), "agent", conv.Agent, "conversation", conv.ID, "run", sent.RunID, "joined", sent.Joined)
	if !sent.Joined && t.d.Deliver != nil {
		t.d.Deliver(context.WithoutCancel(ctx), sent)
	}
	out, err := t.follow(ctx, conv, sent.RunID, wait)
	return result(out), out, err
}

// claim records, in the transaction that starts run runID, that its new conversation is c's.
func (t tools) claim(ctx context.Context, tx pgx.Tx, c Caller, runID string) error {
	tag, err := tx.Exec(ctx, `INSERT INTO core.mcp_conversations (conversation_id, caller)
		SELECT id, $2 FROM core.conversations WHERE active_run = $1::uuid`, runID, c.Owner)
	if err != nil {
		return fmt.Errorf("record the caller's conversation: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("record the caller's conversation: run %s is in %d conversations", runID, tag.RowsAffected())
	}
	return nil
}

// own returns the conversation id names when ask_agent started it for c.
func (t tools) own(ctx context.Context, c Caller, id string) (conversation.Conversation, error) {
	notYours := refusal("conversation " + id + " is not one ask_agent started for you: leave conversation_id out to start one")
	if !text.ValidUUID(id) {
		return conversation.Conversation{}, notYours
	}
	var caller string
	err := t.d.Pool.QueryRow(ctx, `SELECT caller FROM core.mcp_conversations WHERE conversation_id = $1`, id).Scan(&caller)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && caller != c.Owner) {
		return conversation.Conversation{}, notYours
	}
	if err != nil {
		return conversation.Conversation{}, fmt.Errorf("read conversation %s: %w", id, err)
	}
	conv, err := t.d.Conversations.Get(ctx, id)
	if err != nil {
		return conversation.Conversation{}, fmt.Errorf("read conversation %s: %w", id, err)
	}
	return conv, nil
}

// agent finds the agent a caller named, or the default one.
func (t tools) agent(name string) (agents.Agent, error) {
	cat, err := t.d.Catalog()
	if err != nil {
		return agents.Agent{}, fmt.Errorf("the agents could not be loaded: %w", err)
	}
	if strings.TrimSpace(name) == "" {
		a, err := cat.Default()
		if err != nil {
			return agents.Agent{}, refusal("there is no default agent: name one (agents_list shows them)")
		}
		return a, nil
	}
	if a, ok := cat.ByHandle(name); ok {
		return a, nil
	}
	if a, ok := cat.ByID(strings.TrimPrefix(name, "@")); ok {
		return a, nil
	}
	return agents.Agent{}, refusal("there is no agent " + name + ": agents_list shows who there is")
}

// canRun refuses an agent that cannot run now, with the sentence that says why.
func (t tools) canRun(ctx context.Context, agent string) error {
	if ok, why := t.d.Available(ctx, agent); !ok {
		return refusal(agent + " cannot answer now: " + why)
	}
	return nil
}

// follow waits, up to wait, for run runID of conv to end or stop at an approval.
func (t tools) follow(ctx context.Context, conv conversation.Conversation, runID string, wait time.Duration) (askOut, error) {
	out := askOut{ConversationID: conv.ID, RunID: runID, Agent: conv.Agent}
	sub := t.d.Live.Subscribe(conv.ID, runID)
	defer sub.Close()
	// A run that waits on the owner already (a message that joined it) says nothing more.
	if list, err := t.pending(ctx, runID); err != nil {
		return out, err
	} else if len(list) > 0 {
		return waiting(out, list), nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-timer.C:
			return t.settle(ctx, out)
		case ev, open := <-sub.C:
			if !open { // dropped as too slow: read where it stands
				return t.settle(ctx, out)
			}
			if ev.RunID != runID {
				continue
			}
			switch ev.Type {
			case "run.suspended":
				// Replayed from before a decision, nothing waits any more: the run carries on.
				list, err := t.pending(ctx, runID)
				if err != nil {
					return out, err
				}
				if len(list) > 0 {
					return waiting(out, list), nil
				}
			case "run.finished":
				return t.reply(ctx, out)
			case "run.failed":
				out.Status, out.Text = StatusFailed, ev.Text
				return out, nil
			}
		}
	}
}

// settle says where a run stands when the wait is over.
func (t tools) settle(ctx context.Context, out askOut) (askOut, error) {
	conv, err := t.d.Conversations.Get(ctx, out.ConversationID)
	if err != nil {
		return out, err
	}
	if conv.ActiveRun != out.RunID {
		return t.reply(ctx, out)
	}
	list, err := t.pending(ctx, out.RunID)
	if err != nil {
		return out, err
	}
	if len(list) > 0 {
		return waiting(out, list), nil
	}
	out.Status = StatusWorking
	out.Text = "The agent is still working on it. Call ask_agent again with conversation_id " + out.ConversationID + " and no message to read its reply."
	return out, nil
}

// latest reads how conv's last turn went, waiting up to wait for a run in flight.
func (t tools) latest(ctx context.Context, conv conversation.Conversation, wait time.Duration) (askOut, error) {
	if conv.ActiveRun != "" {
		return t.follow(ctx, conv, conv.ActiveRun, wait)
	}
	return t.reply(ctx, askOut{ConversationID: conv.ID, Agent: conv.Agent})
}

// reply reads the last turn of out's conversation (of out.RunID when set) from its
// transcript: its last words, or the marker of a turn that failed.
func (t tools) reply(ctx context.Context, out askOut) (askOut, error) {
	entries, err := t.d.Conversations.Transcript(ctx, out.ConversationID)
	if err != nil {
		return out, err
	}
	run, last, failed := "", "", false
	for _, e := range entries {
		if e.RunID == "" || (out.RunID != "" && e.RunID != out.RunID) {
			continue
		}
		if e.RunID != run {
			run, last, failed = e.RunID, "", false
		}
		switch e.Kind {
		case conversation.KindAssistant:
			var b struct {
				Parts []struct{ Type, Text string } `json:"parts"`
			}
			if json.Unmarshal(e.Body, &b) == nil {
				var s strings.Builder
				for _, p := range b.Parts {
					if p.Type == "text" {
						s.WriteString(p.Text)
					}
				}
				if s.Len() > 0 {
					last = s.String()
				}
			}
		case conversation.KindMarker:
			failed = true
		}
	}
	out.RunID = run
	switch {
	case run == "":
		out.Status, out.Text = StatusWorking, "The agent has not answered yet."
	case failed:
		out.Status, out.Text = StatusFailed, "The agent's turn failed and the message was not answered; the owner was told why."
	default:
		out.Status, out.Text = StatusFinished, last
	}
	return out, nil
}

// waiting is the outcome of a run that stopped at the owner's approval.
func waiting(out askOut, list []approvalOut) askOut {
	out.Status, out.Approvals = StatusWaiting, list
	var b strings.Builder
	for i, a := range list {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (approval %s)", a.Summary, a.ID)
	}
	out.Text = "Waiting for the owner's approval on their surfaces: " + b.String() +
		". Call ask_agent again later with conversation_id " + out.ConversationID + " to carry on."
	return out
}

func result(out askOut) *mcp.CallToolResult {
	r := textResult(out.Text)
	r.IsError = out.Status == StatusFailed
	return r
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
