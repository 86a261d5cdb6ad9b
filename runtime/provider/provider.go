package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Wire names a provider wire protocol.
type Wire string

// The two wires.
const (
	WireAnthropic Wire = "anthropic" // Anthropic Messages (/v1/messages)
	WireOpenAI    Wire = "openai"    // OpenAI Chat Completions (/chat/completions), any compatible endpoint
)

// Provider is the runtime's port to a model: one wire, one account's credential, one base
// URL. Implementations are safe for concurrent use.
type Provider interface {
	// Wire names the wire the provider speaks.
	Wire() Wire
	// Capabilities states what this adapter carries for model.
	Capabilities(model string) Capabilities
	// Stream runs one turn: it sends req, passes each event to h as it arrives (on the
	// calling goroutine) and returns the assembled result. On error the result holds what
	// had been assembled before the failure, and the error is an [*Error]. Transient
	// failures before any event are retried by the provider's [RetryPolicy]; a failure
	// after an event is never retried (the caller has already shown the output).
	Stream(ctx context.Context, req Request, h Handler) (Result, error)
}

// Handler receives the events of a turn, in order, on the goroutine that called Stream. It
// must not block for long: the stream's read idle timeout runs while it does.
type Handler func(Event)

// Request is one turn for a provider.
type Request struct {
	Model    string    // the concrete model name, within the provider (never migrated)
	System   string    // the agent's system prompt; may be empty
	Messages []Message // the conversation so far, oldest first; must not be empty
	Tools    []Tool    // the tools the model may call; names as buddi knows them (dots allowed)
	Limits   Limits    // token and time limits of this call
	// WebSearch, when set, offers the provider's own web search (a wire whose
	// Capabilities.NativeWebSearch is true); the searches it made come back in
	// Result.Searches. A wire without it refuses the request.
	WebSearch *WebSearch
}

// WebSearch is the provider's own web search, offered to the model for one call.
type WebSearch struct {
	MaxUses int // the most searches in the call; 0 means the provider's default
}

// Search is one search the provider made on the model's behalf (native web search).
type Search struct {
	ID      string      // the provider's id of the search
	Query   string      // what the model searched for
	Results []SearchHit // the pages found, in the provider's order
	Error   string      // the provider's error code when the search failed, else ""
}

// SearchHit is one page a native search found.
type SearchHit struct {
	URL   string // the page
	Title string // its title
}

// Limits bounds one provider call. The number of tool-call rounds in a run is the caller's
// to count; a provider call is one round.
type Limits struct {
	// MaxTokens is the most output tokens the model may produce. Zero means
	// [DefaultMaxTokens]; a value above the model's [Capabilities.MaxOutputTokens] is
	// lowered to it. It is always sent.
	MaxTokens int
	// Timeout bounds the whole call, retries and their waits included. Zero means only the
	// caller's context bounds it. When it runs out the call fails with an [*Error] of kind
	// [KindTimeout], class [Unknown].
	Timeout time.Duration
}

// DefaultMaxTokens is the output token limit of a request whose Limits.MaxTokens is zero.
const DefaultMaxTokens = 4096

// EffectiveMaxTokens returns the max_tokens to send for l under caps.
func (l Limits) EffectiveMaxTokens(caps Capabilities) int {
	n := l.MaxTokens
	if n <= 0 {
		n = DefaultMaxTokens
	}
	if caps.MaxOutputTokens > 0 && n > caps.MaxOutputTokens {
		n = caps.MaxOutputTokens
	}
	return n
}

// Validate reports what makes r unsendable before any byte leaves the process.
func (r Request) Validate() error {
	var errs []error
	if r.Model == "" {
		errs = append(errs, errors.New("no model"))
	}
	if len(r.Messages) == 0 {
		errs = append(errs, errors.New("no messages"))
	}
	if r.Limits.MaxTokens < 0 {
		errs = append(errs, fmt.Errorf("max tokens %d is negative", r.Limits.MaxTokens))
	}
	for i, m := range r.Messages {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			errs = append(errs, fmt.Errorf("message %d: role %q is neither user nor assistant", i, m.Role))
		}
		for _, p := range m.Parts {
			switch p := p.(type) {
			case ToolCall:
				if m.Role != RoleAssistant {
					errs = append(errs, fmt.Errorf("message %d: a tool call in a %s message", i, m.Role))
				}
				if len(p.Args) > 0 && !json.Valid(p.Args) {
					errs = append(errs, fmt.Errorf("message %d: tool call %s: arguments are not JSON", i, p.ID))
				}
			case ToolResult:
				if m.Role != RoleUser {
					errs = append(errs, fmt.Errorf("message %d: a tool result in a %s message", i, m.Role))
				}
			}
		}
	}
	for _, t := range r.Tools {
		if t.Name == "" {
			errs = append(errs, errors.New("a tool without a name"))
		}
		if len(t.Schema) > 0 && !json.Valid(t.Schema) {
			errs = append(errs, fmt.Errorf("tool %s: schema is not JSON", t.Name))
		}
	}
	return errors.Join(errs...)
}

// Role is who wrote a message.
type Role string

// The roles of a conversation. The system prompt is not a message: it is [Request.System].
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one message of the conversation.
type Message struct {
	Role  Role   // user or assistant
	Parts []Part // in order; tool results come first in a user message that has them
}

// Part is one piece of a message: [Text], [Image], [ToolCall] or [ToolResult].
type Part interface{ isPart() }

// Text is plain text.
type Text struct {
	Text string // the text; an empty text is not sent
}

// Image is an inline image. Carried where [Capabilities.Images] is true.
type Image struct {
	MediaType string // image/png, image/jpeg, image/gif or image/webp
	Data      []byte // the raw bytes (not base64)
}

// ToolCall is a call the model made, in an assistant message.
type ToolCall struct {
	ID   string          // the provider's call id, answered by a ToolResult with the same CallID
	Name string          // the tool's buddi name (developer.run), not its wire name
	Args json.RawMessage // the arguments, a JSON object; empty means {}
}

// ToolResult answers a ToolCall, in the user message that follows it.
type ToolResult struct {
	CallID  string // the ToolCall.ID it answers
	Content string // the result as text
	IsError bool   // the tool failed; the content says why
}

func (Text) isPart()       {}
func (Image) isPart()      {}
func (ToolCall) isPart()   {}
func (ToolResult) isPart() {}

// Tool is a tool the model may call.
type Tool struct {
	Name        string          // buddi's name (dots allowed); mapped on the wire by [ToolNames]
	Description string          // what the tool does, for the model
	Schema      json.RawMessage // the JSON Schema of the arguments, an object schema; empty means {"type":"object"}
}

// EventType tells which fields of an [Event] are set.
type EventType int

// The events of a turn, in the order they can arrive: deltas and tool calls interleaved as
// the model writes them, then usage, then the stop reason last.
const (
	EventTextDelta     EventType = iota + 1 // Text
	EventToolCallStart                      // Index, ToolCall.ID, ToolCall.Name
	EventToolCallDelta                      // Index, ToolCall.ID, ArgsDelta
	EventToolCallEnd                        // Index, ToolCall (complete: ID, Name, Args)
	EventUsage                              // Usage
	EventStop                               // StopReason
	// EventWaiting comes before any other event of a retried attempt: the call waits until
	// RetryAt (a 429's Retry-After, or the backoff after a failure), and Text says why.
	EventWaiting // RetryAt, Text
	// EventSearch is a native web search the provider ran (Request.WebSearch), once its
	// result arrived: it happened, so the attempt is never retried blindly after it.
	EventSearch // Search
)

// String names the event type.
func (t EventType) String() string {
	switch t {
	case EventTextDelta:
		return "text-delta"
	case EventToolCallStart:
		return "tool-call-start"
	case EventToolCallDelta:
		return "tool-call-delta"
	case EventToolCallEnd:
		return "tool-call-end"
	case EventUsage:
		return "usage"
	case EventStop:
		return "stop"
	case EventWaiting:
		return "waiting"
	case EventSearch:
		return "search"
	}
	return fmt.Sprintf("event(%d)", int(t))
}

// Event is one streamed event of a turn.
type Event struct {
	Type       EventType  // which of the fields below are set
	Text       string     // EventTextDelta: the new text; EventWaiting: why the call waits
	Index      int        // tool call events: the call's position among the turn's tool calls, from 0
	ToolCall   ToolCall   // tool call events: the call (Args complete only at EventToolCallEnd)
	ArgsDelta  string     // EventToolCallDelta: the next fragment of the arguments' JSON
	Usage      Usage      // EventUsage
	StopReason StopReason // EventStop
	RetryAt    time.Time  // EventWaiting: when the next attempt starts
	Search     Search     // EventSearch
}

// Usage counts the tokens of a call.
type Usage struct {
	InputTokens      int64 // prompt tokens billed at the normal rate
	OutputTokens     int64 // generated tokens
	CacheReadTokens  int64 // prompt tokens read from the provider's cache
	CacheWriteTokens int64 // prompt tokens written to the provider's cache
}

// StopReason is why the model stopped, normalised across wires.
type StopReason string

// The stop reasons.
const (
	StopEndTurn   StopReason = "end_turn"      // the model finished its turn
	StopToolUse   StopReason = "tool_use"      // the model called one or more tools
	StopMaxTokens StopReason = "max_tokens"    // the output token limit was reached
	StopSequence  StopReason = "stop_sequence" // a stop sequence was produced
	StopRefusal   StopReason = "refusal"       // the model or a content filter refused
	StopPauseTurn StopReason = "pause_turn"    // the provider paused a long turn; send it back to continue
	StopOther     StopReason = "other"         // anything else; Result.RawStopReason has the wire's word
)

// Result is the outcome of one call.
type Result struct {
	ID            string     // the provider's id of the response, when it gave one
	Model         string     // the model as the provider reported it
	Message       Message    // the assistant message: text and tool calls, in order
	StopReason    StopReason // normalised
	RawStopReason string     // as the wire said it
	Usage         Usage      // token counts
	Attempts      int        // HTTP attempts made, retries included
	Searches      []Search   // the native web searches the provider made (Request.WebSearch)
}

// ToolCalls returns the tool calls of the result's message, in order.
func (r Result) ToolCalls() []ToolCall {
	var out []ToolCall
	for _, p := range r.Message.Parts {
		if c, ok := p.(ToolCall); ok {
			out = append(out, c)
		}
	}
	return out
}

// Text returns the concatenated text of the result's message.
func (r Result) Text() string {
	var s string
	for _, p := range r.Message.Parts {
		if t, ok := p.(Text); ok {
			s += t.Text
		}
	}
	return s
}
