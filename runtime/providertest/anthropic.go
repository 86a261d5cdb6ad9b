package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// toolNamePattern is what the real services accept as a tool name.
var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// decodeJSON decodes a request body into a generic object, numbers kept as json.Number.
func decodeJSON(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fmt.Errorf("body is not an object")
	}
	return v, nil
}

func hasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, part := range strings.Split(v, ",") {
			if strings.TrimSpace(part) == token {
				return true
			}
		}
	}
	return false
}

// checkAnthropic applies the Messages API's refusals to a request.
func checkAnthropic(r *http.Request, body []byte) (*wireRequest, *refusal) {
	bad := func(format string, args ...any) *refusal {
		return &refusal{http.StatusBadRequest, "invalid_request_error", fmt.Sprintf(format, args...)}
	}
	unauthorized := func(msg string) *refusal {
		return &refusal{http.StatusUnauthorized, "authentication_error", msg}
	}

	subscription := false
	if key := r.Header.Get("X-Api-Key"); key != "" {
		if key != APIKey {
			return nil, unauthorized("invalid x-api-key")
		}
	} else if tok, ok := bearer(r.Header); ok {
		if tok != SubscriptionToken {
			return nil, unauthorized("Invalid bearer token")
		}
		if !hasToken(r.Header, "Anthropic-Beta", OAuthBeta) {
			return nil, unauthorized("OAuth authentication is currently not supported.")
		}
		subscription = true
	} else {
		return nil, unauthorized("x-api-key header is required")
	}

	switch v := r.Header.Get("Anthropic-Version"); v {
	case "":
		return nil, bad("anthropic-version: header is required")
	case AnthropicVersion:
	default:
		return nil, bad("anthropic-version: %q is not a valid version", v)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return nil, bad("content-type: expected application/json, got %q", ct)
	}
	req, err := decodeJSON(body)
	if err != nil {
		return nil, bad("invalid JSON body: %v", err)
	}

	model, _ := req["model"].(string)
	if model == "" {
		return nil, bad("model: Field required")
	}
	mt, ok := req["max_tokens"]
	if !ok {
		return nil, bad("max_tokens: Field required")
	}
	if n, ok := mt.(json.Number); !ok {
		return nil, bad("max_tokens: Input should be a valid integer")
	} else if i, err := n.Int64(); err != nil || i < 1 {
		return nil, bad("max_tokens: Input should be greater than or equal to 1")
	}
	if stream, _ := req["stream"].(bool); !stream {
		return nil, bad("stream: providertest serves streaming requests only")
	}

	// The system prompt.
	var system []any
	switch s := req["system"].(type) {
	case nil:
	case string:
		system = []any{map[string]any{"type": "text", "text": s}}
	case []any:
		system = s
		for i, b := range s {
			block, _ := b.(map[string]any)
			if block["type"] != "text" {
				return nil, bad("system.%d.type: Input should be 'text'", i)
			}
			if text, _ := block["text"].(string); text == "" {
				return nil, bad("system.%d.text: text content blocks must be non-empty", i)
			}
		}
	default:
		return nil, bad("system: Input should be a valid string or list")
	}
	if subscription {
		first := map[string]any(nil)
		if _, isString := req["system"].(string); !isString && len(system) > 0 {
			first, _ = system[0].(map[string]any)
		}
		if first == nil || first["text"] != ClaudeCodeIdentity {
			return nil, bad("This credential is only authorized for use with Claude Code and cannot be used for other API requests.")
		}
	}

	// The tools.
	tools, _ := req["tools"].([]any)
	if v, ok := req["tools"]; ok && v != nil && tools == nil {
		return nil, bad("tools: Input should be a valid list")
	}
	var names []string
	for i, t := range tools {
		tool, _ := t.(map[string]any)
		name, _ := tool["name"].(string)
		if typ, _ := tool["type"].(string); typ != "" && typ != "custom" {
			// A server tool: only the web search is known here.
			if typ != "web_search_20250305" || name != "web_search" {
				return nil, bad("tools.%d: Input tag '%s' found using 'type' does not match any of the expected tags", i, typ)
			}
			if slices.Contains(names, name) {
				return nil, bad("tools: Tool names must be unique.")
			}
			names = append(names, name)
			continue
		}
		if !toolNamePattern.MatchString(name) {
			return nil, bad("tools.%d.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", i)
		}
		if slices.Contains(names, name) {
			return nil, bad("tools: Tool names must be unique.")
		}
		names = append(names, name)
		schema, _ := tool["input_schema"].(map[string]any)
		if schema == nil {
			return nil, bad("tools.%d.custom.input_schema: Field required", i)
		}
		if schema["type"] != "object" {
			return nil, bad("tools.%d.custom.input_schema.type: Input should be 'object'", i)
		}
	}

	// The messages, and the pairing of tool calls and results.
	messages, _ := req["messages"].([]any)
	if len(messages) == 0 {
		return nil, bad("messages: at least one message is required")
	}
	var pending []string // tool_use ids of the previous assistant message
	for i, m := range messages {
		msg, _ := m.(map[string]any)
		role, _ := msg["role"].(string)
		if role != "user" && role != "assistant" {
			return nil, bad("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		var blocks []any
		switch c := msg["content"].(type) {
		case string:
			if c == "" {
				return nil, bad("messages.%d: text content blocks must be non-empty", i)
			}
		case []any:
			blocks = c
		default:
			return nil, bad("messages.%d.content: Input should be a valid string or list", i)
		}
		var uses, results []string
		for j, b := range blocks {
			block, _ := b.(map[string]any)
			switch block["type"] {
			case "text":
				if text, _ := block["text"].(string); text == "" {
					return nil, bad("messages.%d.content.%d.text: text content blocks must be non-empty", i, j)
				}
			case "image":
				src, _ := block["source"].(map[string]any)
				if src == nil || src["type"] != "base64" || src["media_type"] == nil || src["data"] == nil {
					return nil, bad("messages.%d.content.%d.image.source: Field required", i, j)
				}
			case "tool_use":
				if role != "assistant" {
					return nil, bad("messages.%d.content.%d: tool_use blocks may only appear in assistant messages", i, j)
				}
				id, _ := block["id"].(string)
				name, _ := block["name"].(string)
				if id == "" {
					return nil, bad("messages.%d.content.%d.tool_use.id: Field required", i, j)
				}
				if !toolNamePattern.MatchString(name) {
					return nil, bad("messages.%d.content.%d.tool_use.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", i, j)
				}
				if _, ok := block["input"].(map[string]any); !ok {
					return nil, bad("messages.%d.content.%d.tool_use.input: Input should be a valid dictionary", i, j)
				}
				uses = append(uses, id)
			case "tool_result":
				if role != "user" {
					return nil, bad("messages.%d.content.%d: tool_result blocks may only appear in user messages", i, j)
				}
				id, _ := block["tool_use_id"].(string)
				if !slices.Contains(pending, id) {
					return nil, bad("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, id)
				}
				results = append(results, id)
			default:
				return nil, bad("messages.%d.content.%d.type: unknown content block type %v", i, j, block["type"])
			}
		}
		var missing []string
		for _, id := range pending {
			if !slices.Contains(results, id) {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return nil, bad("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i, strings.Join(missing, ", "))
		}
		pending = uses
	}
	if len(pending) > 0 {
		return nil, bad("messages: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", strings.Join(pending, ", "))
	}
	return &wireRequest{model: model}, nil
}

// streamAnthropic streams a scripted reply as Messages server-sent events.
func streamAnthropic(w http.ResponseWriter, req *wireRequest, reply Reply, seq int) {
	s := newSSE(w, reply)
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_pt%04d", seq), "type": "message", "role": "assistant", "model": req.model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": reply.InputTokens, "output_tokens": 1},
	}})
	s.event("ping", map[string]any{"type": "ping"})
	if reply.DropBeforeContent {
		s.drop()
	}
	index := 0
	for i, q := range reply.Searches {
		id := fmt.Sprintf("srvtoolu_pt%04d_%d", seq, i)
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "server_tool_use", "id": id, "name": "web_search", "input": map[string]any{}}})
		input, _ := json.Marshal(map[string]string{"query": q.Query})
		for _, piece := range chunks(string(input), 8) {
			s.delta("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
		var content any
		if q.ErrorCode != "" {
			content = map[string]any{"type": "web_search_tool_result_error", "error_code": q.ErrorCode}
		} else {
			hits := []any{}
			for _, h := range q.Results {
				hits = append(hits, map[string]any{"type": "web_search_result", "url": h.URL, "title": h.Title,
					"encrypted_content": "EqgfCioIARgBIiQ3", "page_age": "April 30, 2026"})
			}
			content = hits
		}
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "web_search_tool_result", "tool_use_id": id, "content": content}})
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if len(reply.Text) > 0 {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		for _, t := range reply.Text {
			s.delta("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": t}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for _, c := range reply.ToolCalls {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		args := c.Args
		if args == "" {
			args = "{}"
		}
		for _, piece := range chunks(args, 8) {
			s.delta("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if reply.StreamError {
		errType, msg := reply.ErrorType, reply.ErrorMessage
		if errType == "" {
			errType, msg = "overloaded_error", "Overloaded"
		}
		s.event("error", map[string]any{"type": "error", "error": map[string]any{"type": errType, "message": msg}})
		return
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": reply.stopReason(), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": reply.OutputTokens}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}
