package providertest

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// checkOpenAI applies the Chat Completions API's refusals to a request.
func checkOpenAI(r *http.Request, body []byte) (*wireRequest, *refusal) {
	bad := func(format string, args ...any) *refusal {
		return &refusal{http.StatusBadRequest, "invalid_request_error", fmt.Sprintf(format, args...)}
	}
	tok, ok := bearer(r.Header)
	if !ok || tok == "" {
		return nil, &refusal{http.StatusUnauthorized, "invalid_request_error",
			"You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth."}
	}
	if tok != APIKey {
		return nil, &refusal{http.StatusUnauthorized, "invalid_request_error", "Incorrect API key provided."}
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return nil, bad("Invalid content type %q; expected application/json.", ct)
	}
	req, err := decodeJSON(body)
	if err != nil {
		return nil, bad("We could not parse the JSON body of your request: %v", err)
	}
	model, _ := req["model"].(string)
	if model == "" {
		return nil, bad("you must provide a model parameter")
	}
	if stream, _ := req["stream"].(bool); !stream {
		return nil, bad("stream: providertest serves streaming requests only")
	}
	includeUsage := false
	if so, _ := req["stream_options"].(map[string]any); so != nil {
		includeUsage, _ = so["include_usage"].(bool)
	}

	tools, _ := req["tools"].([]any)
	for i, t := range tools {
		tool, _ := t.(map[string]any)
		if tool["type"] != "function" {
			return nil, bad("Invalid value for 'tools[%d].type': expected 'function'.", i)
		}
		fn, _ := tool["function"].(map[string]any)
		name, _ := fn["name"].(string)
		if !toolNamePattern.MatchString(name) {
			return nil, bad("Invalid 'tools[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", i)
		}
		if p, ok := fn["parameters"]; ok {
			if _, isObject := p.(map[string]any); !isObject {
				return nil, bad("Invalid 'tools[%d].function.parameters': expected an object.", i)
			}
		}
	}

	messages, _ := req["messages"].([]any)
	if len(messages) == 0 {
		return nil, bad("Invalid 'messages': empty array. Expected an array with minimum length 1.")
	}
	pending := map[string]bool{} // the calls of the last assistant message not yet answered
	unanswered := func() *refusal {
		ids := slices.Sorted(maps.Keys(pending))
		return bad("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(ids, ", "))
	}
	for i, m := range messages {
		msg, _ := m.(map[string]any)
		role, _ := msg["role"].(string)
		if role == "tool" {
			id, _ := msg["tool_call_id"].(string)
			if !pending[id] {
				return nil, bad("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
			}
			delete(pending, id)
			if _, ok := msg["content"]; !ok {
				return nil, bad("Missing required parameter: 'messages[%d].content'.", i)
			}
			continue
		}
		if len(pending) > 0 {
			return nil, unanswered()
		}
		switch role {
		case "system", "developer", "user":
			if msg["content"] == nil {
				return nil, bad("Missing required parameter: 'messages[%d].content'.", i)
			}
		case "assistant":
			calls, _ := msg["tool_calls"].([]any)
			if msg["content"] == nil && len(calls) == 0 {
				return nil, bad("Invalid value for 'messages[%d]': an assistant message needs content or tool_calls.", i)
			}
			for j, c := range calls {
				call, _ := c.(map[string]any)
				id, _ := call["id"].(string)
				fn, _ := call["function"].(map[string]any)
				name, _ := fn["name"].(string)
				if id == "" {
					return nil, bad("Missing required parameter: 'messages[%d].tool_calls[%d].id'.", i, j)
				}
				if !toolNamePattern.MatchString(name) {
					return nil, bad("Invalid 'messages[%d].tool_calls[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", i, j)
				}
				if _, ok := fn["arguments"].(string); !ok {
					return nil, bad("Missing required parameter: 'messages[%d].tool_calls[%d].function.arguments'.", i, j)
				}
				pending[id] = true
			}
		default:
			return nil, bad("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'developer'.", role)
		}
	}
	if len(pending) > 0 {
		return nil, unanswered()
	}
	return &wireRequest{model: model, includeUsage: includeUsage}, nil
}

// openAIFinish maps a scripted stop reason to Chat Completions' finish_reason.
func openAIFinish(stop string) string {
	switch stop {
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	case "refusal":
		return "content_filter"
	}
	return "stop"
}

// streamOpenAI streams a scripted reply as Chat Completions chunks.
func streamOpenAI(w http.ResponseWriter, req *wireRequest, reply Reply, seq int) {
	s := newSSE(w, reply)
	id := fmt.Sprintf("chatcmpl-pt%04d", seq)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": req.model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	s.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if reply.DropBeforeContent {
		s.drop()
	}
	for _, t := range reply.Text {
		s.delta("", chunk(map[string]any{"content": t}, nil))
	}
	// Announce every call, then interleave their argument pieces: the client must
	// assemble by index.
	pieces := make([][]string, len(reply.ToolCalls))
	for i, c := range reply.ToolCalls {
		args := c.Args
		if args == "" {
			args = "{}"
		}
		pieces[i] = chunks(args, 6)
		s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""},
		}}}, nil))
	}
	for round := 0; ; round++ {
		sent := false
		for i := range reply.ToolCalls {
			if round < len(pieces[i]) {
				s.delta("", chunk(map[string]any{"tool_calls": []any{map[string]any{
					"index": i, "function": map[string]any{"arguments": pieces[i][round]},
				}}}, nil))
				sent = true
			}
		}
		if !sent {
			break
		}
	}
	if reply.StreamError {
		errType, msg := reply.ErrorType, reply.ErrorMessage
		if errType == "" {
			errType, msg = "server_error", "The server had an error while processing your request."
		}
		s.event("", map[string]any{"error": map[string]any{"message": msg, "type": errType, "param": nil, "code": nil}})
		return
	}
	s.event("", chunk(map[string]any{}, openAIFinish(reply.stopReason())))
	if req.includeUsage {
		s.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": req.model,
			"choices": []any{}, "usage": map[string]any{
				"prompt_tokens": reply.InputTokens, "completion_tokens": reply.OutputTokens,
				"total_tokens": reply.InputTokens + reply.OutputTokens,
			}})
	}
	s.event("", "[DONE]")
}
