package providertest

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"buddi/runtime/provider"
	"buddi/runtime/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// send posts body to the server at path with headers given as name, value pairs.
func send(t *testing.T, s *Server, path, body string, headerPairs ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headerPairs); i += 2 {
		req.Header.Set(headerPairs[i], headerPairs[i+1])
	}
	resp, err := transport.New(s.TransportConfig()).Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const (
	okMessages = `"messages":[{"role":"user","content":"hi"}]`
	identity   = `{"type":"text","text":"You are Claude Code, Anthropic's official CLI for Claude."}`
)

var (
	keyHeaders   = []string{"X-Api-Key", APIKey, "Anthropic-Version", AnthropicVersion, "Content-Type", "application/json"}
	tokenHeaders = []string{"Authorization", "Bearer " + SubscriptionToken, "Anthropic-Beta", OAuthBeta, "Anthropic-Version", AnthropicVersion, "Content-Type", "application/json"}
)

func TestStrictMessagesWire(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		headers []string
		body    string
		status  int
		refusal string // a piece of the refusal
	}{
		{"a valid api-key request", keyHeaders, `{"model":"m","max_tokens":5,"stream":true,` + okMessages + `}`, 200, ""},
		{"a valid subscription request", tokenHeaders, `{"model":"m","max_tokens":5,"stream":true,"system":[` + identity + `,{"type":"text","text":"agent"}],` + okMessages + `}`, 200, ""},
		{"no credential", []string{"Anthropic-Version", AnthropicVersion, "Content-Type", "application/json"}, `{}`, 401, "x-api-key header is required"},
		{"a wrong api key", []string{"X-Api-Key", "nope", "Anthropic-Version", AnthropicVersion}, `{}`, 401, "invalid x-api-key"},
		{"a wrong bearer token", []string{"Authorization", "Bearer sk-ant-oat01-other", "Anthropic-Beta", OAuthBeta, "Anthropic-Version", AnthropicVersion}, `{}`, 401, "Invalid bearer token"},
		{"a token without the oauth beta", []string{"Authorization", "Bearer " + SubscriptionToken, "Anthropic-Version", AnthropicVersion}, `{}`, 401, "OAuth"},
		{"a token with a string system prompt", tokenHeaders, `{"model":"m","max_tokens":5,"stream":true,"system":"You are Claude Code, Anthropic's official CLI for Claude.",` + okMessages + `}`, 400, "only authorized for use with Claude Code"},
		{"a token with the identity merged into one block", tokenHeaders, `{"model":"m","max_tokens":5,"stream":true,"system":[{"type":"text","text":"You are Claude Code, Anthropic's official CLI for Claude.\nagent"}],` + okMessages + `}`, 400, "only authorized for use with Claude Code"},
		{"a token with the identity second", tokenHeaders, `{"model":"m","max_tokens":5,"stream":true,"system":[{"type":"text","text":"agent"},` + identity + `],` + okMessages + `}`, 400, "only authorized"},
		{"no anthropic-version", []string{"X-Api-Key", APIKey, "Content-Type", "application/json"}, `{"model":"m","max_tokens":5,"stream":true,` + okMessages + `}`, 400, "anthropic-version: header is required"},
		{"an unknown anthropic-version", []string{"X-Api-Key", APIKey, "Anthropic-Version", "1999-01-01", "Content-Type", "application/json"}, `{}`, 400, "not a valid version"},
		{"no max_tokens", keyHeaders, `{"model":"m","stream":true,` + okMessages + `}`, 400, "max_tokens: Field required"},
		{"max_tokens zero", keyHeaders, `{"model":"m","max_tokens":0,"stream":true,` + okMessages + `}`, 400, "greater than or equal to 1"},
		{"no model", keyHeaders, `{"max_tokens":5,"stream":true,` + okMessages + `}`, 400, "model: Field required"},
		{"malformed JSON", keyHeaders, `{"model":`, 400, "invalid JSON"},
		{"not streaming", keyHeaders, `{"model":"m","max_tokens":5,` + okMessages + `}`, 400, "streaming requests only"},
		{"a dotted tool name", keyHeaders, `{"model":"m","max_tokens":5,"stream":true,"tools":[{"name":"developer.run","input_schema":{"type":"object"}}],` + okMessages + `}`, 400, "tools.0.custom.name"},
		{"a tool name too long", keyHeaders, `{"model":"m","max_tokens":5,"stream":true,"tools":[{"name":"` + strings.Repeat("a", 65) + `","input_schema":{"type":"object"}}],` + okMessages + `}`, 400, "should match pattern"},
		{"duplicate tool names", keyHeaders, `{"model":"m","max_tokens":5,"stream":true,"tools":[{"name":"a","input_schema":{"type":"object"}},{"name":"a","input_schema":{"type":"object"}}],` + okMessages + `}`, 400, "unique"},
		{"a dotted name in a past tool call", keyHeaders, `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"developer.run","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}]}`, 400, "tool_use.name"},
		{"a tool result answering no call", keyHeaders, `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t_ghost","content":"x"}]}]}`, 400, "unexpected `tool_use_id`"},
		{"a tool result answering an older call", keyHeaders, `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"a","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]},{"role":"assistant","content":"done"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}]}`, 400, "unexpected `tool_use_id`"},
		{"a tool call left unanswered", keyHeaders, `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"a","input":{}}]},{"role":"user","content":"and?"}]}`, 400, "without `tool_result`"},
		{"an empty text block", keyHeaders, `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, 400, "must be non-empty"},
		{"no messages", keyHeaders, `{"model":"m","max_tokens":5,"stream":true,"messages":[]}`, 400, "at least one message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := New(t)
			if tt.status == 200 {
				s.Script(Text("fine"))
			}
			status, body := send(t, s, "/v1/messages", tt.body, tt.headers...)
			if status != tt.status {
				t.Fatalf("status = %d, want %d: %s", status, tt.status, body)
			}
			reqs := s.Requests()
			if len(reqs) != 1 || reqs[0].Wire != provider.WireAnthropic {
				t.Fatalf("recorded %+v", reqs)
			}
			if tt.status == 200 {
				if reqs[0].Refusal != "" || !strings.Contains(body, "event: message_stop") {
					t.Errorf("refusal %q, body %s", reqs[0].Refusal, body)
				}
				return
			}
			if !strings.Contains(reqs[0].Refusal, tt.refusal) || !strings.Contains(body, `"type":"error"`) {
				t.Errorf("refusal %q (body %s), want it to mention %q", reqs[0].Refusal, body, tt.refusal)
			}
		})
	}
}

func TestStrictChatCompletionsWire(t *testing.T) {
	t.Parallel()
	auth := []string{"Authorization", "Bearer " + APIKey, "Content-Type", "application/json"}
	tests := []struct {
		name    string
		headers []string
		body    string
		status  int
		refusal string
	}{
		{"a valid request", auth, `{"model":"m","stream":true,` + okMessages + `}`, 200, ""},
		{"a valid tool round trip", auth, `{"model":"m","stream":true,"tools":[{"type":"function","function":{"name":"developer__run","parameters":{"type":"object"}}}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"developer__run","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`, 200, ""},
		{"no credential", []string{"Content-Type", "application/json"}, `{}`, 401, "didn't provide an API key"},
		{"a wrong key", []string{"Authorization", "Bearer sk-other"}, `{}`, 401, "Incorrect API key"},
		{"no model", auth, `{"stream":true,` + okMessages + `}`, 400, "model parameter"},
		{"a dotted tool name", auth, `{"model":"m","stream":true,"tools":[{"type":"function","function":{"name":"developer.run"}}],` + okMessages + `}`, 400, "tools[0].function.name"},
		{"a dotted name in a past call", auth, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"developer.run","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`, 400, "tool_calls[0].function.name"},
		{"a tool result answering no call", auth, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c_ghost","content":"x"}]}`, 400, "must be a response to a preceeding message"},
		{"a tool call left unanswered", auth, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"a","arguments":"{}"}}]},{"role":"user","content":"and?"}]}`, 400, "did not have response messages: c1"},
		{"not streaming", auth, `{"model":"m",` + okMessages + `}`, 400, "streaming requests only"},
		{"an unknown role", auth, `{"model":"m","stream":true,"messages":[{"role":"wizard","content":"hi"}]}`, 400, "Supported values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := New(t)
			if tt.status == 200 {
				s.Script(Text("fine"))
			}
			status, body := send(t, s, "/v1/chat/completions", tt.body, tt.headers...)
			if status != tt.status {
				t.Fatalf("status = %d, want %d: %s", status, tt.status, body)
			}
			reqs := s.Requests()
			if len(reqs) != 1 || reqs[0].Wire != provider.WireOpenAI {
				t.Fatalf("recorded %+v", reqs)
			}
			if tt.status == 200 {
				if reqs[0].Refusal != "" || !strings.Contains(body, "data: [DONE]") {
					t.Errorf("refusal %q, body %s", reqs[0].Refusal, body)
				}
				return
			}
			if !strings.Contains(reqs[0].Refusal, tt.refusal) || !strings.Contains(body, `"error"`) {
				t.Errorf("refusal %q (body %s), want it to mention %q", reqs[0].Refusal, body, tt.refusal)
			}
		})
	}
}

func TestUnknownPathAndRecording(t *testing.T) {
	t.Parallel()
	s := New(t)
	status, _ := send(t, s, "/v1/completions", `{}`)
	if status != 404 {
		t.Errorf("status = %d, want 404", status)
	}
	r := s.Requests()[0]
	if r.Path != "/v1/completions" || r.Refusal == "" || r.Proto != "HTTP/1.1" || string(r.Body) != "{}" {
		t.Errorf("recorded %+v", r)
	}
}

// A reply with From is made from the request that takes it: here, it echoes what the
// request's last message said, as a model answering with an id a tool result gave it.
func TestReplyMadeFromTheRequest(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.Script(Reply{From: func(body []byte) Reply {
		if strings.Contains(string(body), "the id is 42") {
			return Text("you said 42")
		}
		return Text("no id")
	}})
	status, out := send(t, s, "/v1/messages", `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"the id is 42"}]}`, keyHeaders...)
	if status != 200 || !strings.Contains(out, "you said 42") {
		t.Fatalf("status %d, stream:\n%s", status, out)
	}
}
