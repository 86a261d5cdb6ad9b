package provider

import "strings"

// SystemPromptForm is how a wire carries the system prompt.
type SystemPromptForm string

// The system prompt forms.
const (
	SystemBlocks  SystemPromptForm = "blocks"  // a top-level list of text blocks (Anthropic)
	SystemMessage SystemPromptForm = "message" // a first message of role system (Chat Completions)
)

// ToolResultOrdering is what a wire requires of where tool results stand.
type ToolResultOrdering string

// The tool result orderings.
const (
	// ToolResultsNextUserMessage: every tool call is answered by a result in the user
	// message right after the assistant message that made it, before any text.
	ToolResultsNextUserMessage ToolResultOrdering = "next-user-message"
	// ToolResultsNextMessages: every tool call is answered by a tool message right after
	// the assistant message that made it, before any other message.
	ToolResultsNextMessages ToolResultOrdering = "next-messages"
)

// Capabilities is a row of the capability matrix: what this adapter carries for one model.
// A row states what the adapter implements, not what the vendor sells; the loop consults it
// and degrades what is missing (a document sent where Documents is false becomes a sentence
// naming the file).
type Capabilities struct {
	Wire               Wire               // the wire
	Model              string             // the model the row is for
	Streaming          bool               // text arrives as deltas
	StreamingToolArgs  bool               // tool arguments arrive as deltas (EventToolCallDelta)
	Tools              bool               // tool definitions and calls are carried
	ParallelToolCalls  bool               // one turn may carry several tool calls
	Images             bool               // Image parts in user messages are carried
	Documents          bool               // documents (PDF) are carried; no adapter does yet
	ToolResultOrdering ToolResultOrdering // where tool results must stand
	Cancellation       bool               // cancelling the context stops the call and its stream
	UsageReporting     bool               // token usage is reported (EventUsage)
	NativeWebSearch    bool               // the provider's own web search can be offered (Request.WebSearch)
	SystemPrompt       SystemPromptForm   // how the system prompt travels
	MaxOutputTokens    int                // the most output tokens the model accepts in max_tokens
}

// ModelLimit is one entry of a wire's table of output token limits: models whose name
// starts with Prefix accept at most MaxOutputTokens.
type ModelLimit struct {
	Prefix          string // a model name prefix
	MaxOutputTokens int    // its output token ceiling
}

// LookupMaxOutputTokens returns the limit of the longest prefix in table that model starts
// with, or fallback.
func LookupMaxOutputTokens(table []ModelLimit, model string, fallback int) int {
	best, n := -1, fallback
	for _, l := range table {
		if strings.HasPrefix(model, l.Prefix) && len(l.Prefix) > best {
			best, n = len(l.Prefix), l.MaxOutputTokens
		}
	}
	return n
}
