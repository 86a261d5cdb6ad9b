package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"

	"buddi/runtime/provider"
)

// block is one content block being assembled.
type block struct {
	tool   bool
	search bool // a server_tool_use of the provider's web search: its input is the query
	id     string
	name   string // the buddi name
	call   int    // the tool call's position among the turn's calls
	text   strings.Builder
	args   strings.Builder
	done   bool
}

// readStream reads a Messages event stream into events and a result. The result holds what
// was assembled even when an error is returned: the text so far and the tool calls that
// were complete.
func readStream(stream *ssestream.Stream[sdk.MessageStreamEventUnion], names *provider.ToolNames, emit provider.Handler) (provider.Result, error) {
	var res provider.Result
	blocks := map[int64]*block{}
	calls := 0
	stopped := false
	rawStop := ""
	assemble := func() {
		res.Message = message(blocks)
	}
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			res.ID, res.Model = ev.Message.ID, string(ev.Message.Model)
			u := ev.Message.Usage
			res.Usage = provider.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
				CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
		case "content_block_start":
			if _, seen := blocks[ev.Index]; seen {
				continue
			}
			cb := ev.ContentBlock
			switch cb.Type {
			case "text":
				b := &block{}
				blocks[ev.Index] = b
				if cb.Text != "" {
					b.text.WriteString(cb.Text)
					emit(provider.Event{Type: provider.EventTextDelta, Text: cb.Text})
				}
			case "tool_use":
				b := &block{tool: true, id: cb.ID, name: names.Name(cb.Name), call: calls}
				calls++
				blocks[ev.Index] = b
				emit(provider.Event{Type: provider.EventToolCallStart, Index: b.call, ToolCall: provider.ToolCall{ID: b.id, Name: b.name}})
			case "server_tool_use":
				// The provider's own tool, run on its side: only its web search is asked
				// for. It is not a call buddi answers; its query is kept for the record.
				if cb.Name == "web_search" {
					b := &block{search: true, id: cb.ID}
					var start struct {
						Input json.RawMessage `json:"input"`
					}
					if json.Unmarshal([]byte(cb.RawJSON()), &start) == nil {
						b.text.Write(start.Input) // the input as the block began; deltas may follow
					}
					blocks[ev.Index] = b
				}
			case "web_search_tool_result":
				res.Searches = appendSearchResult(res.Searches, blocks, cb.RawJSON())
				emit(provider.Event{Type: provider.EventSearch, Search: res.Searches[len(res.Searches)-1]})
			}
			// Other blocks (thinking, other server tools) are not requested and not carried.
		case "content_block_delta":
			b := blocks[ev.Index]
			if b == nil || b.done {
				continue
			}
			switch d := ev.Delta; {
			case d.Type == "text_delta" && !b.tool:
				b.text.WriteString(d.Text)
				emit(provider.Event{Type: provider.EventTextDelta, Text: d.Text})
			case d.Type == "input_json_delta" && b.search:
				b.args.WriteString(d.PartialJSON)
			case d.Type == "input_json_delta" && b.tool:
				b.args.WriteString(d.PartialJSON)
				emit(provider.Event{Type: provider.EventToolCallDelta, Index: b.call, ToolCall: provider.ToolCall{ID: b.id, Name: b.name}, ArgsDelta: d.PartialJSON})
			}
		case "content_block_stop":
			b := blocks[ev.Index]
			if b == nil || b.done {
				continue
			}
			b.done = true
			if !b.tool {
				continue
			}
			call, err := b.toolCall()
			if err != nil {
				assemble()
				return res, err
			}
			emit(provider.Event{Type: provider.EventToolCallEnd, Index: b.call, ToolCall: call})
		case "message_delta":
			if ev.Delta.StopReason != "" {
				rawStop = string(ev.Delta.StopReason)
			}
			if u := ev.Usage; u.OutputTokens > 0 {
				res.Usage.OutputTokens = u.OutputTokens
			}
			if u := ev.Usage; u.InputTokens > 0 {
				res.Usage.InputTokens = u.InputTokens
			}
		case "message_stop":
			stopped = true
		}
	}
	assemble()
	if err := stream.Err(); err != nil {
		return res, err
	}
	if !stopped {
		return res, &provider.Error{Wire: provider.WireAnthropic, Kind: provider.KindStreamDropped, Class: provider.Transient,
			Err: errors.New("anthropic: the stream ended before message_stop")}
	}
	for _, b := range blocks {
		if b.tool && !b.done {
			return res, &provider.Error{Wire: provider.WireAnthropic, Kind: provider.KindProtocol, Class: provider.Unknown,
				Err: fmt.Errorf("anthropic: tool call %s never ended", b.id)}
		}
	}
	res.RawStopReason = rawStop
	res.StopReason = stopReason(rawStop)
	emit(provider.Event{Type: provider.EventUsage, Usage: res.Usage})
	emit(provider.Event{Type: provider.EventStop, StopReason: res.StopReason})
	return res, nil
}

// toolCall returns the block's complete call, its arguments checked to be a JSON object.
func (b *block) toolCall() (provider.ToolCall, error) {
	args := strings.TrimSpace(b.args.String())
	if args == "" {
		args = "{}"
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return provider.ToolCall{}, &provider.Error{Wire: provider.WireAnthropic, Kind: provider.KindProtocol, Class: provider.Unknown,
			Err: fmt.Errorf("anthropic: tool call %s: arguments are not a JSON object: %v", b.id, err)}
	}
	return provider.ToolCall{ID: b.id, Name: b.name, Args: json.RawMessage(args)}, nil
}

// message assembles the assistant message from the blocks, in block order: text blocks
// with text, and the tool calls that completed.
func message(blocks map[int64]*block) provider.Message {
	idx := make([]int64, 0, len(blocks))
	for i := range blocks {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	msg := provider.Message{Role: provider.RoleAssistant}
	for _, i := range idx {
		b := blocks[i]
		switch {
		case b.search:
		case !b.tool && b.text.Len() > 0:
			msg.Parts = append(msg.Parts, provider.Text{Text: b.text.String()})
		case b.tool && b.done:
			if call, err := b.toolCall(); err == nil {
				msg.Parts = append(msg.Parts, call)
			}
		}
	}
	return msg
}

// stopReason normalises the Messages wire's stop_reason.
func stopReason(raw string) provider.StopReason {
	switch raw {
	case "end_turn":
		return provider.StopEndTurn
	case "tool_use":
		return provider.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return provider.StopMaxTokens
	case "stop_sequence":
		return provider.StopSequence
	case "refusal":
		return provider.StopRefusal
	case "pause_turn":
		return provider.StopPauseTurn
	}
	return provider.StopOther
}

// searchResult is the part of a web_search_tool_result block read: the search it answers
// and either its results or its error.
type searchResult struct {
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// appendSearchResult adds the native search that raw (a web_search_tool_result block)
// answers to searches, with the query its server_tool_use block carried. A block that
// cannot be read is recorded as a search that failed, never dropped: the record of what
// the provider searched for stays whole.
func appendSearchResult(searches []provider.Search, blocks map[int64]*block, raw string) []provider.Search {
	var r searchResult
	s := provider.Search{}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		s.Error = "unreadable_result"
		return append(searches, s)
	}
	s.ID = r.ToolUseID
	for _, b := range blocks {
		if b.search && b.id == r.ToolUseID {
			var in struct {
				Query string `json:"query"`
			}
			input := b.args.String() // streamed as deltas, or whole when the block began
			if strings.TrimSpace(input) == "" {
				input = b.text.String()
			}
			_ = json.Unmarshal([]byte(input), &in)
			s.Query = in.Query
		}
	}
	var hits []struct {
		Type  string `json:"type"`
		URL   string `json:"url"`
		Title string `json:"title"`
	}
	var failure struct {
		Type      string `json:"type"`
		ErrorCode string `json:"error_code"`
	}
	switch {
	case json.Unmarshal(r.Content, &hits) == nil:
		for _, h := range hits {
			if h.Type == "web_search_result" {
				s.Results = append(s.Results, provider.SearchHit{URL: h.URL, Title: h.Title})
			}
		}
	case json.Unmarshal(r.Content, &failure) == nil && failure.ErrorCode != "":
		s.Error = failure.ErrorCode
	default:
		s.Error = "unreadable_result"
	}
	return append(searches, s)
}
