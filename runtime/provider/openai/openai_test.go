package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"buddi/runtime/provider"
	"buddi/runtime/provider/openai"
	"buddi/runtime/providertest"
	"buddi/runtime/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// testBundle is one test's server, provider and record of retry waits.
type testBundle struct {
	srv   *providertest.Server
	p     *openai.Provider
	mu    sync.Mutex
	waits []time.Duration
}

func (b *testBundle) waited() []time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.waits)
}

func setup(t *testing.T, mutate func(*openai.Config, *providertest.Server)) *testBundle {
	t.Helper()
	b := &testBundle{srv: providertest.New(t)}
	cfg := openai.Config{
		Credential: provider.NewCredential(provider.CredentialAPIKey, providertest.APIKey),
		HTTPClient: transport.New(b.srv.TransportConfig()).Client(),
		Retry: provider.RetryPolicy{
			Now:    func() time.Time { return t0 },
			Jitter: func() float64 { return 0 },
			Sleep: func(ctx context.Context, d time.Duration) error {
				b.mu.Lock()
				b.waits = append(b.waits, d)
				b.mu.Unlock()
				return ctx.Err()
			},
		},
	}
	if mutate != nil {
		mutate(&cfg, b.srv)
	}
	p, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.p = p
	return b
}

var tools = []provider.Tool{
	{Name: "developer.run", Description: "Run a command.", Schema: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}}}`)},
	{Name: "developer.read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
}

func ask(text string) provider.Request {
	return provider.Request{
		Model:    "gpt-5",
		System:   "You are @dev.",
		Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{provider.Text{Text: text}}}},
		Tools:    tools,
		Limits:   provider.Limits{MaxTokens: 2048},
	}
}

func collect(t *testing.T, p provider.Provider, req provider.Request) ([]provider.Event, provider.Result, error) {
	t.Helper()
	var events []provider.Event
	res, err := p.Stream(t.Context(), req, func(e provider.Event) { events = append(events, e) })
	return events, res, err
}

func asError(t *testing.T, err error) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v (%T), want a *provider.Error", err, err)
	}
	return pe
}

func TestFullTurnWithParallelToolCalls(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.srv.Script(
		providertest.Reply{
			Text: []string{"Checking ", "both."},
			ToolCalls: []providertest.ToolCall{
				{ID: "call_a", Name: provider.WireToolName("developer.run"), Args: `{"cmd":"git status --short"}`},
				{ID: "call_b", Name: provider.WireToolName("developer.read_file"), Args: `{"path":"README.md"}`},
			},
			InputTokens: 50, OutputTokens: 20,
		},
		providertest.Text("All clean."),
	)
	req := ask("status?")
	events, res, err := collect(t, b.p, req)
	if err != nil {
		t.Fatal(err)
	}
	args := map[int]string{}
	var ends []provider.ToolCall
	for _, e := range events {
		switch e.Type {
		case provider.EventToolCallDelta:
			args[e.Index] += e.ArgsDelta
		case provider.EventToolCallEnd:
			ends = append(ends, e.ToolCall)
		}
	}
	if args[0] != `{"cmd":"git status --short"}` || args[1] != `{"path":"README.md"}` {
		t.Errorf("interleaved deltas assembled to %v", args)
	}
	if len(ends) != 2 || ends[0].Name != "developer.run" || ends[1].Name != "developer.read_file" || ends[1].ID != "call_b" {
		t.Errorf("tool call ends = %+v", ends)
	}
	if last := events[len(events)-1]; last.Type != provider.EventStop || last.StopReason != provider.StopToolUse {
		t.Errorf("last event = %+v", last)
	}
	if res.Text() != "Checking both." || len(res.ToolCalls()) != 2 || res.Usage.InputTokens != 50 || res.Usage.OutputTokens != 20 {
		t.Errorf("result = %+v", res)
	}

	req.Messages = append(req.Messages, res.Message, provider.Message{Role: provider.RoleUser, Parts: []provider.Part{
		provider.ToolResult{CallID: "call_a", Content: ""},
		provider.ToolResult{CallID: "call_b", Content: "no such file", IsError: true},
	}})
	_, res, err = collect(t, b.p, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "All clean." || res.StopReason != provider.StopEndTurn || res.RawStopReason != "stop" {
		t.Errorf("second turn: %q %q %q", res.Text(), res.StopReason, res.RawStopReason)
	}

	body := b.srv.Served()[1].JSON()
	msgs := body["messages"].([]any)
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,tool" {
		t.Errorf("roles = %v", roles)
	}
	call := msgs[2].(map[string]any)["tool_calls"].([]any)[1].(map[string]any)
	if call["id"] != "call_b" || call["function"].(map[string]any)["name"] != "developer__read_file" {
		t.Errorf("history tool call = %v", call)
	}
	if got := msgs[4].(map[string]any)["content"]; got != "Error: no such file" {
		t.Errorf("error tool result content = %v", got)
	}
	if name := body["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)["name"]; name != "developer__run" {
		t.Errorf("tool sent as %v", name)
	}
}

func TestHeadersDoNotClaimOpenAI(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.srv.Script(providertest.Text("hi"))
	if _, _, err := collect(t, b.p, ask("hi")); err != nil {
		t.Fatal(err)
	}
	r := b.srv.Served()[0]
	if got := r.Header.Get("Authorization"); got != "Bearer "+providertest.APIKey {
		t.Errorf("authorization = %q", got)
	}
	for k := range r.Header {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "openai-") || strings.HasPrefix(lk, "x-stainless") || lk == "x-api-key" || lk == "anthropic-version" {
			t.Errorf("header %s sent", k)
		}
	}
	if r.Header.Get("User-Agent") != "buddi" || r.Host != "api.openai.com" || r.Path != "/v1/chat/completions" || r.Proto != "HTTP/1.1" {
		t.Errorf("user-agent %q host %q path %q proto %q", r.Header.Get("User-Agent"), r.Host, r.Path, r.Proto)
	}
	body := r.JSON()
	if fmt.Sprint(body["max_completion_tokens"]) != "2048" || body["max_tokens"] != nil {
		t.Errorf("max_completion_tokens %v, max_tokens %v", body["max_completion_tokens"], body["max_tokens"])
	}
	if so := body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options = %v", so)
	}
	if first := body["messages"].([]any)[0].(map[string]any); first["role"] != "system" || first["content"] != "You are @dev." {
		t.Errorf("first message = %v", first)
	}
	if strings.Contains(string(r.Body), "Claude Code") {
		t.Errorf("the Claude Code identity reached the openai wire")
	}
}

func TestCompatibleEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *openai.Config, srv *providertest.Server) {
		c.BaseURL = srv.OpenAIBaseURL()
		c.Organization = "org-configured"
		c.LegacyMaxTokens = true
	})
	p := b.p
	b.srv.Script(providertest.Text("local model here"))
	req := ask("hi")
	req.Model = "qwen2.5-coder:7b"
	_, res, err := collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	r := b.srv.Served()[0]
	if !strings.HasPrefix(r.Host, "127.0.0.1:") || r.Header.Get("OpenAI-Organization") != "org-configured" {
		t.Errorf("host %q, organization %q", r.Host, r.Header.Get("OpenAI-Organization"))
	}
	if got := fmt.Sprint(r.JSON()["max_tokens"]); got != "2048" || r.JSON()["max_completion_tokens"] != nil {
		t.Errorf("legacy max_tokens = %s", got)
	}
	if res.Text() != "local model here" || openai.Capabilities(req.Model).MaxOutputTokens != 4096 {
		t.Errorf("text %q", res.Text())
	}
}

func TestSubscriptionTokenNeverOnThisWire(t *testing.T) {
	t.Parallel()
	_, err := openai.New(openai.Config{Credential: provider.NewCredential(provider.CredentialSubscriptionToken, providertest.SubscriptionToken)})
	if !errors.Is(err, provider.ErrCredentialInvariant) {
		t.Fatalf("New = %v, want ErrCredentialInvariant", err)
	}
}

func TestRateLimited(t *testing.T) {
	t.Parallel()
	t.Run("retry-after-ms", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		b.srv.Script(providertest.Error(429, "Retry-After-Ms", "1500", "Retry-After", "2"), providertest.Text("ok"))
		_, res, err := collect(t, b.p, ask("hi"))
		if err != nil || res.Attempts != 2 {
			t.Fatalf("err %v, attempts %d", err, res.Attempts)
		}
		if got := b.waited(); len(got) != 1 || got[0] != 1500*time.Millisecond {
			t.Errorf("waited %v, want [1.5s]", got)
		}
	})
	t.Run("past the cap", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		b.srv.Script(providertest.Error(429, "Retry-After", "61"))
		_, _, err := collect(t, b.p, ask("hi"))
		pe := asError(t, err)
		if pe.Kind != provider.KindRateLimited || !pe.RetryAt.Equal(t0.Add(61*time.Second)) || len(b.waited()) != 0 {
			t.Errorf("err %v, waits %v", pe, b.waited())
		}
	})
}

func TestServerErrorThenSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.srv.Script(providertest.Error(502), providertest.Text("ok"))
	_, res, err := collect(t, b.p, ask("hi"))
	if err != nil || res.Attempts != 2 || fmt.Sprint(b.waited()) != "[500ms]" {
		t.Fatalf("err %v, attempts %d, waits %v", err, res.Attempts, b.waited())
	}
}

func TestRefusedCredential(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *openai.Config, _ *providertest.Server) {
		c.Credential = provider.NewCredential(provider.CredentialAPIKey, "sk-nope")
	})
	_, res, err := collect(t, b.p, ask("hi"))
	pe := asError(t, err)
	if pe.Kind != provider.KindRefusedCredential || pe.Class != provider.Permanent || res.Attempts != 1 || len(b.srv.Requests()) != 1 {
		t.Errorf("err %v, attempts %d, requests %d", pe, res.Attempts, len(b.srv.Requests()))
	}
	if pe.Sentence() == "" || strings.Contains(pe.Error(), "sk-nope") {
		t.Errorf("sentence %q, error %q", pe.Sentence(), pe.Error())
	}
}

func TestDroppedMidStream(t *testing.T) {
	t.Parallel()
	t.Run("after output", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		b.srv.Script(providertest.Reply{Text: []string{"one ", "two ", "three"}, DropAfter: 2})
		events, res, err := collect(t, b.p, ask("count"))
		pe := asError(t, err)
		if pe.Kind != provider.KindStreamDropped || pe.Class != provider.Transient || !pe.AfterOutput {
			t.Errorf("err = %v", pe)
		}
		if len(events) != 2 || res.Text() != "one two " || res.Attempts != 1 || len(b.srv.Requests()) != 1 {
			t.Errorf("events %d, text %q, attempts %d, requests %d", len(events), res.Text(), res.Attempts, len(b.srv.Requests()))
		}
	})
	t.Run("before output", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		b.srv.Script(providertest.Reply{DropBeforeContent: true}, providertest.Text("again"))
		_, res, err := collect(t, b.p, ask("count"))
		if err != nil || res.Attempts != 2 || res.Text() != "again" {
			t.Fatalf("err %v, attempts %d, text %q", err, res.Attempts, res.Text())
		}
	})
}

func TestErrorChunkInStream(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.srv.Script(providertest.Reply{Text: []string{"par"}, StreamError: true})
	_, _, err := collect(t, b.p, ask("hi"))
	pe := asError(t, err)
	if pe.Kind != provider.KindServer || !pe.AfterOutput || pe.Type != "server_error" {
		t.Errorf("err = %v", pe)
	}
}

func TestOrphanToolResultRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	req := ask("hi")
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, Parts: []provider.Part{provider.Text{Text: "ok"}}},
		provider.Message{Role: provider.RoleUser, Parts: []provider.Part{provider.ToolResult{CallID: "call_ghost", Content: "x"}}},
	)
	_, _, err := collect(t, b.p, req)
	pe := asError(t, err)
	if pe.Kind != provider.KindBadRequest || pe.Class != provider.Permanent || !strings.Contains(pe.Message, "role 'tool'") {
		t.Errorf("err = %v", pe)
	}
}

func TestImagePart(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.srv.Script(providertest.Text("a cat"))
	req := ask("what is this?")
	req.Messages[0].Parts = append(req.Messages[0].Parts, provider.Image{MediaType: "image/png", Data: []byte("\x89PNG")})
	if _, _, err := collect(t, b.p, req); err != nil {
		t.Fatal(err)
	}
	content := b.srv.Served()[0].JSON()["messages"].([]any)[1].(map[string]any)["content"]
	got, _ := json.Marshal(content)
	if string(got) != `[{"text":"what is this?","type":"text"},{"image_url":{"url":"data:image/png;base64,iVBORw=="},"type":"image_url"}]` {
		t.Errorf("user content = %s", got)
	}
}
