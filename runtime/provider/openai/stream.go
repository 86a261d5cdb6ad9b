package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"buddi/runtime/provider"
)

// call is one tool call being assembled from its deltas.
type call struct {
	position int // the call's position among the turn's calls
	id       string
	name     string // the buddi name
	started  bool
	args     strings.Builder
}

// readStream reads a Chat Completions chunk stream into events and a result. The result
// holds what was assembled even when an error is returned: the text so far and, when the
// stream finished, the tool calls.
func readStream(stream *ssestream.Stream[sdk.ChatCompletionChunk], names *provider.ToolNames, emit provider.Handler) (provider.Result, error) {
	var res provider.Result
	var text strings.Builder
	byIndex := map[int64]*call{}
	var calls []*call
	finish := ""
	for stream.Next() {
		chunk := stream.Current()
		if chunk.ID != "" {
			res.ID = chunk.ID
		}
		if chunk.Model != "" {
			res.Model = chunk.Model
		}
		if u := chunk.Usage; u.PromptTokens > 0 || u.CompletionTokens > 0 {
			cached := u.PromptTokensDetails.CachedTokens
			res.Usage = provider.Usage{InputTokens: u.PromptTokens - cached, OutputTokens: u.CompletionTokens, CacheReadTokens: cached}
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue // one choice is asked for
			}
			d := choice.Delta
			if d.Content != "" {
				text.WriteString(d.Content)
				emit(provider.Event{Type: provider.EventTextDelta, Text: d.Content})
			}
			for _, tc := range d.ToolCalls {
				c := byIndex[tc.Index]
				if c == nil {
					c = &call{position: len(calls)}
					byIndex[tc.Index] = c
					calls = append(calls, c)
				}
				if c.id == "" && tc.ID != "" {
					c.id = tc.ID
				}
				if c.name == "" && tc.Function.Name != "" {
					c.name = names.Name(tc.Function.Name)
				}
				if tc.Function.Arguments != "" {
					c.args.WriteString(tc.Function.Arguments)
				}
				if !c.started && c.id != "" && c.name != "" {
					c.started = true
					emit(provider.Event{Type: provider.EventToolCallStart, Index: c.position, ToolCall: provider.ToolCall{ID: c.id, Name: c.name}})
					if c.args.Len() > 0 { // pieces that came before the name
						emit(provider.Event{Type: provider.EventToolCallDelta, Index: c.position, ToolCall: provider.ToolCall{ID: c.id, Name: c.name}, ArgsDelta: c.args.String()})
					}
				} else if c.started && tc.Function.Arguments != "" {
					emit(provider.Event{Type: provider.EventToolCallDelta, Index: c.position, ToolCall: provider.ToolCall{ID: c.id, Name: c.name}, ArgsDelta: tc.Function.Arguments})
				}
			}
			if choice.FinishReason != "" {
				finish = choice.FinishReason
			}
		}
	}
	res.Message = provider.Message{Role: provider.RoleAssistant}
	if text.Len() > 0 {
		res.Message.Parts = append(res.Message.Parts, provider.Text{Text: text.String()})
	}
	if err := stream.Err(); err != nil {
		return res, err
	}
	if finish == "" {
		return res, &provider.Error{Wire: provider.WireOpenAI, Kind: provider.KindStreamDropped, Class: provider.Transient,
			Err: errors.New("openai: the stream ended without a finish_reason")}
	}
	for _, c := range calls {
		tc, err := c.toolCall()
		if err != nil {
			return res, err
		}
		if !c.started { // a call whose name or id never came complete
			c.started = true
			emit(provider.Event{Type: provider.EventToolCallStart, Index: c.position, ToolCall: provider.ToolCall{ID: tc.ID, Name: tc.Name}})
		}
		emit(provider.Event{Type: provider.EventToolCallEnd, Index: c.position, ToolCall: tc})
		res.Message.Parts = append(res.Message.Parts, tc)
	}
	res.RawStopReason = finish
	res.StopReason = stopReason(finish)
	emit(provider.Event{Type: provider.EventUsage, Usage: res.Usage})
	emit(provider.Event{Type: provider.EventStop, StopReason: res.StopReason})
	return res, nil
}

// toolCall returns the complete call: a name, an id (made up from the position when an
// endpoint sent none), and arguments that are a JSON object.
func (c *call) toolCall() (provider.ToolCall, error) {
	if c.name == "" {
		return provider.ToolCall{}, &provider.Error{Wire: provider.WireOpenAI, Kind: provider.KindProtocol, Class: provider.Unknown,
			Err: fmt.Errorf("openai: tool call %d has no name", c.position)}
	}
	id := c.id
	if id == "" {
		id = fmt.Sprintf("call_%d", c.position)
	}
	args := strings.TrimSpace(c.args.String())
	if args == "" {
		args = "{}"
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return provider.ToolCall{}, &provider.Error{Wire: provider.WireOpenAI, Kind: provider.KindProtocol, Class: provider.Unknown,
			Err: fmt.Errorf("openai: tool call %s: arguments are not a JSON object: %v", id, err)}
	}
	return provider.ToolCall{ID: id, Name: c.name, Args: json.RawMessage(args)}, nil
}

// stopReason normalises Chat Completions' finish_reason.
func stopReason(raw string) provider.StopReason {
	switch raw {
	case "stop":
		return provider.StopEndTurn
	case "tool_calls", "function_call":
		return provider.StopToolUse
	case "length":
		return provider.StopMaxTokens
	case "content_filter":
		return provider.StopRefusal
	}
	return provider.StopOther
}
