package providertest

import "net/http"

// Reply is one scripted answer of the model server. The zero Reply streams an empty
// end_turn.
type Reply struct {
	// Status, when neither 0 nor 200, answers with that HTTP error status, ErrorType,
	// ErrorMessage and Header, in the wire's error format, instead of a stream.
	Status int
	// ErrorType is the wire's error type of an error status or a stream error; empty takes
	// the wire's usual type for the status (rate_limit_error, overloaded_error, …).
	ErrorType string
	// ErrorMessage is the error's message.
	ErrorMessage string
	// Header holds extra response headers (Retry-After, retry-after-ms, …).
	Header http.Header

	// Text is the reply's text, streamed as one delta per element.
	Text []string
	// ToolCalls are the tool calls after the text. Their arguments are streamed in small
	// pieces; on Chat Completions several calls are interleaved, so the client must
	// assemble them by index.
	ToolCalls []ToolCall
	// Searches are native web searches (Messages wire only) streamed before the text, each
	// as a server_tool_use block and its web_search_tool_result.
	Searches []Search
	// StopReason is end_turn, tool_use, max_tokens or stop_sequence, in the Messages
	// wire's words (mapped for Chat Completions); empty means tool_use when there are
	// tool calls and end_turn otherwise.
	StopReason string
	// InputTokens and OutputTokens are the usage the reply reports.
	InputTokens, OutputTokens int64

	// StreamError, when set, ends the stream after the content with an error event of
	// ErrorType and ErrorMessage instead of its normal end.
	StreamError bool
	// DropAfter, when above zero, drops the connection right after that many content
	// deltas (text or argument pieces) have been sent: a connection lost mid-stream.
	DropAfter int
	// DropBeforeContent drops the connection after the stream's opening, before any
	// content delta.
	DropBeforeContent bool
	// Stall sends nothing and holds the request until the client gives up.
	Stall bool

	// From, when set, makes the reply from the request's raw body when the request takes
	// it: a model answering with what an earlier tool result said (an id made at run time).
	// The reply it returns is used as is; its own From is ignored.
	From func(body []byte) Reply
}

// ToolCall is one scripted tool call.
type ToolCall struct {
	ID   string // the call id
	Name string // the name as sent on the wire (a mapped name, such as developer__run)
	Args string // the arguments' JSON; empty means {}
}

// Search is one scripted native web search: the query and its results, or an error code.
type Search struct {
	Query     string      // what the model searched for
	Results   []SearchHit // the pages found
	ErrorCode string      // e.g. max_uses_exceeded; set, the search failed
}

// SearchHit is one page a scripted search found.
type SearchHit struct {
	URL   string // the page
	Title string // its title
}

// Text returns a reply that streams text in the given pieces and ends the turn.
func Text(pieces ...string) Reply { return Reply{Text: pieces, InputTokens: 12, OutputTokens: 7} }

// Tools returns a reply that calls tools and stops for their results.
func Tools(calls ...ToolCall) Reply {
	return Reply{ToolCalls: calls, InputTokens: 20, OutputTokens: 15}
}

// Error returns a reply of an HTTP error status with headers given as name, value pairs.
func Error(status int, headerPairs ...string) Reply {
	h := http.Header{}
	for i := 0; i+1 < len(headerPairs); i += 2 {
		h.Add(headerPairs[i], headerPairs[i+1])
	}
	return Reply{Status: status, Header: h}
}

func (r Reply) stopReason() string {
	switch {
	case r.StopReason != "":
		return r.StopReason
	case len(r.ToolCalls) > 0:
		return "tool_use"
	}
	return "end_turn"
}
