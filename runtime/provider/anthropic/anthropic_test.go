package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"buddi/runtime/provider"
	"buddi/runtime/provider/anthropic"
	"buddi/runtime/providertest"
	"buddi/runtime/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// testBundle is one test's server, provider and record of retry waits.
type testBundle struct {
	srv   *providertest.Server
	p     *anthropic.Provider
	mu    sync.Mutex
	waits []time.Duration
}

func (b *testBundle) waited() []time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.waits)
}

type options struct {
	cred     provider.Credential
	baseURL  string
	maxBytes int64
}

func setup(t *testing.T, opts options) *testBundle {
	t.Helper()
	b := &testBundle{srv: providertest.New(t)}
	if opts.cred.IsZero() {
		opts.cred = provider.NewCredential(provider.CredentialAPIKey, providertest.APIKey)
	}
	tc := b.srv.TransportConfig()
	tc.MaxResponseBytes = opts.maxBytes
	p, err := anthropic.New(anthropic.Config{
		Credential: opts.cred,
		BaseURL:    opts.baseURL,
		HTTPClient: transport.New(tc).Client(),
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
	})
	if err != nil {
		t.Fatal(err)
	}
	b.p = p
	return b
}

var runTool = provider.Tool{
	Name:        "developer.run",
	Description: "Run a command in the workspace.",
	Schema:      json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"],"additionalProperties":false}`),
}

func ask(text string) provider.Request {
	return provider.Request{
		Model:    "claude-sonnet-4-5",
		System:   "You are @dev, the owner's developer agent.",
		Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{provider.Text{Text: text}}}},
		Tools:    []provider.Tool{runTool},
		Limits:   provider.Limits{MaxTokens: 1024},
	}
}

// collect streams req and returns the events, the result and the error.
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

func TestFullTurnWithToolRoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	wireName := provider.WireToolName("developer.run")
	b.srv.Script(
		providertest.Reply{
			Text:        []string{"Let me ", "look."},
			ToolCalls:   []providertest.ToolCall{{ID: "toolu_01", Name: wireName, Args: `{"cmd":"ls -la /tmp"}`}},
			InputTokens: 30, OutputTokens: 12,
		},
		providertest.Text("There are ", "three files."),
	)

	req := ask("What is in /tmp?")
	events, res, err := collect(t, b.p, req)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	var args string
	for _, e := range events {
		types = append(types, e.Type.String())
		if e.Type == provider.EventToolCallDelta {
			args += e.ArgsDelta
		}
	}
	if got := strings.Join(slices.Compact(types), ","); got != "text-delta,tool-call-start,tool-call-delta,tool-call-end,usage,stop" {
		t.Errorf("event order = %s", got)
	}
	if args != `{"cmd":"ls -la /tmp"}` {
		t.Errorf("argument deltas add up to %q", args)
	}
	start := events[slices.IndexFunc(events, func(e provider.Event) bool { return e.Type == provider.EventToolCallStart })]
	if start.ToolCall.Name != "developer.run" || start.ToolCall.ID != "toolu_01" || start.Index != 0 {
		t.Errorf("tool call start = %+v, want developer.run toolu_01 at 0", start)
	}
	if res.Text() != "Let me look." || res.StopReason != provider.StopToolUse || res.RawStopReason != "tool_use" {
		t.Errorf("result text %q, stop %q (%q)", res.Text(), res.StopReason, res.RawStopReason)
	}
	calls := res.ToolCalls()
	if len(calls) != 1 || calls[0].Name != "developer.run" || string(calls[0].Args) != `{"cmd":"ls -la /tmp"}` {
		t.Fatalf("tool calls = %+v", calls)
	}
	if res.Usage.InputTokens != 30 || res.Usage.OutputTokens != 12 || res.Attempts != 1 || res.Model != "claude-sonnet-4-5" {
		t.Errorf("usage %+v, attempts %d, model %q", res.Usage, res.Attempts, res.Model)
	}

	// The tool result goes back; the strict server checks it answers the call.
	req.Messages = append(req.Messages, res.Message, provider.Message{Role: provider.RoleUser, Parts: []provider.Part{
		provider.ToolResult{CallID: calls[0].ID, Content: "a.txt b.txt c.txt"},
	}})
	_, res, err = collect(t, b.p, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "There are three files." || res.StopReason != provider.StopEndTurn {
		t.Errorf("second turn: %q, %q", res.Text(), res.StopReason)
	}

	served := b.srv.Served()
	if len(served) != 2 {
		t.Fatalf("served %d requests, want 2", len(served))
	}
	body := served[1].JSON()
	if tools := body["tools"].([]any); tools[0].(map[string]any)["name"] != wireName {
		t.Errorf("tool sent as %v, want %s", tools[0].(map[string]any)["name"], wireName)
	}
	msgs := body["messages"].([]any)
	use := msgs[1].(map[string]any)["content"].([]any)[1].(map[string]any)
	result := msgs[2].(map[string]any)["content"].([]any)[0].(map[string]any)
	if use["type"] != "tool_use" || use["name"] != wireName || use["id"] != "toolu_01" {
		t.Errorf("history tool_use = %v", use)
	}
	if result["type"] != "tool_result" || result["tool_use_id"] != "toolu_01" {
		t.Errorf("tool_result = %v", result)
	}
	if mt := fmt.Sprint(body["max_tokens"]); mt != "1024" {
		t.Errorf("max_tokens = %s, want 1024", mt)
	}
}

func TestAPIKeyHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	b.srv.Script(providertest.Text("hi"))
	if _, _, err := collect(t, b.p, ask("hello")); err != nil {
		t.Fatal(err)
	}
	r := b.srv.Served()[0]
	h := r.Header
	if h.Get("X-Api-Key") != providertest.APIKey || h.Get("Authorization") != "" {
		t.Errorf("x-api-key %q, authorization %q; want the key in x-api-key only", h.Get("X-Api-Key"), h.Get("Authorization"))
	}
	if h.Get("Anthropic-Version") != "2023-06-01" || h.Get("Anthropic-Beta") != "" {
		t.Errorf("anthropic-version %q, anthropic-beta %q", h.Get("Anthropic-Version"), h.Get("Anthropic-Beta"))
	}
	if h.Get("User-Agent") != "buddi" {
		t.Errorf("user-agent %q", h.Get("User-Agent"))
	}
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "x-stainless") {
			t.Errorf("SDK header %s sent", k)
		}
	}
	if r.Host != "api.anthropic.com" || r.Proto != "HTTP/1.1" || r.Path != "/v1/messages" {
		t.Errorf("host %q, proto %q, path %q", r.Host, r.Proto, r.Path)
	}
	system := r.JSON()["system"].([]any)
	if len(system) != 1 || system[0].(map[string]any)["text"] != "You are @dev, the owner's developer agent." {
		t.Errorf("api-key system = %v, want the agent's prompt alone", system)
	}
}

func TestSubscriptionTokenHeadersAndSystemBlocks(t *testing.T) {
	t.Parallel()
	b := setup(t, options{cred: provider.NewCredential(provider.CredentialSubscriptionToken, providertest.SubscriptionToken)})
	b.srv.Script(providertest.Text("hi"))
	if _, _, err := collect(t, b.p, ask("hello")); err != nil {
		t.Fatal(err)
	}
	r := b.srv.Served()[0]
	if got := r.Header.Get("Authorization"); got != "Bearer "+providertest.SubscriptionToken {
		t.Errorf("authorization = %q", got)
	}
	if r.Header.Get("X-Api-Key") != "" {
		t.Errorf("x-api-key sent with a subscription token")
	}
	if got := r.Header.Get("Anthropic-Beta"); got != anthropic.OAuthBeta {
		t.Errorf("anthropic-beta = %q", got)
	}
	want := []any{
		map[string]any{"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
		map[string]any{"type": "text", "text": "You are @dev, the owner's developer agent."},
	}
	if got, _ := json.Marshal(r.JSON()["system"]); string(got) != mustJSON(want) {
		t.Errorf("system = %s\nwant     %s", got, mustJSON(want))
	}
	if anthropic.ClaudeCodeIdentity != providertest.ClaudeCodeIdentity {
		t.Errorf("the adapter's identity block differs from the server's")
	}
}

func TestSubscriptionTokenWithoutAgentPrompt(t *testing.T) {
	t.Parallel()
	b := setup(t, options{cred: provider.NewCredential(provider.CredentialSubscriptionToken, providertest.SubscriptionToken)})
	b.srv.Script(providertest.Text("hi"))
	req := ask("hello")
	req.System = ""
	if _, _, err := collect(t, b.p, req); err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(b.srv.Served()[0].JSON()["system"]); string(got) != `[{"text":"You are Claude Code, Anthropic's official CLI for Claude.","type":"text"}]` {
		t.Errorf("system = %s", got)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestSubscriptionTokenRefusedElsewhere(t *testing.T) {
	t.Parallel()
	_, err := anthropic.New(anthropic.Config{
		Credential: provider.NewCredential(provider.CredentialSubscriptionToken, providertest.SubscriptionToken),
		BaseURL:    "https://proxy.example",
	})
	if !errors.Is(err, provider.ErrCredentialInvariant) {
		t.Fatalf("New = %v, want ErrCredentialInvariant", err)
	}
}

func TestAPIKeyAtACustomBaseURL(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	b.srv.Script(providertest.Text("hi"))
	p, err := anthropic.New(anthropic.Config{
		Credential: provider.NewCredential(provider.CredentialAPIKey, providertest.APIKey),
		BaseURL:    b.srv.URL,
		HTTPClient: transport.New(b.srv.TransportConfig()).Client(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := collect(t, p, ask("hello")); err != nil {
		t.Fatal(err)
	}
	if host := b.srv.Served()[0].Host; !strings.HasPrefix(host, "127.0.0.1:") {
		t.Errorf("host = %q, want the custom base URL's", host)
	}
}

func TestRateLimitedWithRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		retryAfter string
		want       time.Duration
	}{
		{"seconds", "7", 7 * time.Second},
		{"http date", t0.Add(45 * time.Second).Format(http.TimeFormat), 45 * time.Second},
		{"exactly the cap", "60", 60 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, options{})
			b.srv.Script(providertest.Error(429, "Retry-After", tt.retryAfter), providertest.Text("ok"))
			_, res, err := collect(t, b.p, ask("hello"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Attempts != 2 || res.Text() != "ok" {
				t.Errorf("attempts %d, text %q", res.Attempts, res.Text())
			}
			if got := b.waited(); len(got) != 1 || got[0] != tt.want {
				t.Errorf("waited %v, want [%v]", got, tt.want)
			}
		})
	}
	t.Run("past the cap", func(t *testing.T) {
		t.Parallel()
		b := setup(t, options{})
		b.srv.Script(providertest.Error(429, "Retry-After", "3600"))
		_, _, err := collect(t, b.p, ask("hello"))
		pe := asError(t, err)
		if pe.Kind != provider.KindRateLimited || pe.Class != provider.Transient || !pe.RetryAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("err = %v, want rate-limited, transient, retry at t0+1h", pe)
		}
		if got := b.waited(); len(got) != 0 {
			t.Errorf("waited %v in process for a reset an hour away", got)
		}
		if at, ok := provider.RetryAt(fmt.Errorf("job: %w", err)); !ok || !at.Equal(t0.Add(time.Hour)) {
			t.Errorf("RetryAt through a wrapped chain = %v, %v", at, ok)
		}
	})
}

func TestServerErrorsRetriedThenSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	b.srv.Script(providertest.Error(500), providertest.Error(529), providertest.Text("finally"))
	_, res, err := collect(t, b.p, ask("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Attempts != 3 || res.Text() != "finally" {
		t.Errorf("attempts %d, text %q", res.Attempts, res.Text())
	}
	if got := fmt.Sprint(b.waited()); got != "[500ms 1s]" {
		t.Errorf("waits = %s, want the exponential curve [500ms 1s]", got)
	}
}

func TestServerErrorsExhaustAttempts(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	b.srv.Script(providertest.Error(503), providertest.Error(503), providertest.Error(503))
	_, res, err := collect(t, b.p, ask("hello"))
	pe := asError(t, err)
	if pe.Kind != provider.KindOverloaded || pe.Class != provider.Transient || res.Attempts != 3 {
		t.Errorf("err %v after %d attempts", pe, res.Attempts)
	}
}

func TestRefusedCredentialNotRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, options{cred: provider.NewCredential(provider.CredentialAPIKey, "sk-wrong-key")})
	_, res, err := collect(t, b.p, ask("hello"))
	pe := asError(t, err)
	if pe.Kind != provider.KindRefusedCredential || pe.Class != provider.Permanent || pe.Status != 401 {
		t.Errorf("err = %v, want a permanent refused credential (401)", pe)
	}
	if pe.Type != "authentication_error" || pe.Message != "invalid x-api-key" {
		t.Errorf("type %q, message %q", pe.Type, pe.Message)
	}
	if res.Attempts != 1 || len(b.srv.Requests()) != 1 || len(b.waited()) != 0 {
		t.Errorf("attempts %d, requests %d, waits %v: a refused credential must not be retried", res.Attempts, len(b.srv.Requests()), b.waited())
	}
	if strings.Contains(err.Error(), "sk-wrong-key") {
		t.Errorf("the error shows the key: %v", err)
	}
}

func TestDroppedMidStream(t *testing.T) {
	t.Parallel()
	t.Run("after output: reported, not retried", func(t *testing.T) {
		t.Parallel()
		b := setup(t, options{})
		b.srv.Script(providertest.Reply{Text: []string{"Hello", " world", "!"}, DropAfter: 2})
		events, res, err := collect(t, b.p, ask("hello"))
		pe := asError(t, err)
		if pe.Kind != provider.KindStreamDropped || pe.Class != provider.Transient || !pe.AfterOutput {
			t.Errorf("err = %v, want a transient dropped stream after output", pe)
		}
		if len(events) != 2 || res.Text() != "Hello world" || res.Attempts != 1 {
			t.Errorf("events %d, partial text %q, attempts %d", len(events), res.Text(), res.Attempts)
		}
		if len(b.srv.Requests()) != 1 || len(b.waited()) != 0 {
			t.Errorf("requests %d, waits %v: no blind retry", len(b.srv.Requests()), b.waited())
		}
	})
	t.Run("before output: retried", func(t *testing.T) {
		t.Parallel()
		b := setup(t, options{})
		b.srv.Script(providertest.Reply{DropBeforeContent: true}, providertest.Text("second try"))
		events, res, err := collect(t, b.p, ask("hello"))
		if err != nil {
			t.Fatal(err)
		}
		// The wait before the second attempt comes first, saying why and until when.
		if len(events) < 2 || events[0].Type != provider.EventWaiting || events[0].RetryAt.IsZero() || events[0].Text == "" {
			t.Fatalf("events %+v: want the wait first", events)
		}
		if res.Attempts != 2 || res.Text() != "second try" || events[1].Text != "second try" {
			t.Errorf("attempts %d, text %q", res.Attempts, res.Text())
		}
	})
	t.Run("during a tool call's arguments", func(t *testing.T) {
		t.Parallel()
		b := setup(t, options{})
		b.srv.Script(providertest.Reply{
			ToolCalls: []providertest.ToolCall{{ID: "toolu_9", Name: "developer__run", Args: `{"cmd":"rm -rf build && make all"}`}},
			DropAfter: 2,
		})
		_, res, err := collect(t, b.p, ask("build"))
		pe := asError(t, err)
		if pe.Kind != provider.KindStreamDropped || !pe.AfterOutput {
			t.Errorf("err = %v", pe)
		}
		if len(res.ToolCalls()) != 0 {
			t.Errorf("a half-streamed tool call reached the result: %+v", res.ToolCalls())
		}
	})
}

func TestErrorEventInStream(t *testing.T) {
	t.Parallel()
	t.Run("before output is retried", func(t *testing.T) {
		t.Parallel()
		b := setup(t, options{})
		b.srv.Script(providertest.Reply{StreamError: true}, providertest.Text("ok"))
		_, res, err := collect(t, b.p, ask("hello"))
		if err != nil || res.Attempts != 2 {
			t.Fatalf("err %v, attempts %d", err, res.Attempts)
		}
	})
	t.Run("after output is reported", func(t *testing.T) {
		t.Parallel()
		b := setup(t, options{})
		b.srv.Script(providertest.Reply{Text: []string{"partial"}, StreamError: true, ErrorType: "overloaded_error", ErrorMessage: "Overloaded"})
		_, _, err := collect(t, b.p, ask("hello"))
		pe := asError(t, err)
		if pe.Kind != provider.KindOverloaded || pe.Class != provider.Transient || !pe.AfterOutput || pe.Status != 200 || pe.Message != "Overloaded" {
			t.Errorf("err = %v", pe)
		}
	})
}

func TestByteLimitExceeded(t *testing.T) {
	t.Parallel()
	b := setup(t, options{maxBytes: 2000})
	long := make([]string, 60)
	for i := range long {
		long[i] = strings.Repeat("word ", 10)
	}
	b.srv.Script(providertest.Reply{Text: long})
	_, _, err := collect(t, b.p, ask("hello"))
	pe := asError(t, err)
	var tooLarge *transport.TooLargeError
	if pe.Kind != provider.KindTooLarge || pe.Class != provider.Permanent || !errors.As(err, &tooLarge) || tooLarge.Limit != 2000 {
		t.Errorf("err = %v, want a permanent too-large error at 2000 bytes", err)
	}
	if len(b.srv.Requests()) != 1 {
		t.Errorf("requests = %d, want 1", len(b.srv.Requests()))
	}
}

func TestTurnTimeoutIsUnknown(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	b.srv.Script(providertest.Reply{Stall: true})
	req := ask("hello")
	// Long enough for the request to reach the server on a loaded machine (a deadline
	// that ran out in the TLS handshake left the stalled reply unasked), short enough to
	// keep the test quick: the server holds the answer until the client gives up.
	req.Limits.Timeout = 2 * time.Second
	_, res, err := collect(t, b.p, req)
	pe := asError(t, err)
	if pe.Kind != provider.KindTimeout || pe.Class != provider.Unknown || res.Attempts != 1 {
		t.Errorf("err = %v after %d attempts, want an unknown timeout, not retried", pe, res.Attempts)
	}
}

func TestOrphanToolResultRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	req := ask("hello")
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, Parts: []provider.Part{provider.Text{Text: "ok"}}},
		provider.Message{Role: provider.RoleUser, Parts: []provider.Part{provider.ToolResult{CallID: "toolu_nobody", Content: "x"}}},
	)
	_, res, err := collect(t, b.p, req)
	pe := asError(t, err)
	if pe.Kind != provider.KindBadRequest || pe.Class != provider.Permanent || res.Attempts != 1 {
		t.Errorf("err = %v after %d attempts", pe, res.Attempts)
	}
	if r := b.srv.Requests()[0]; !strings.Contains(r.Refusal, "toolu_nobody") {
		t.Errorf("refusal = %q", r.Refusal)
	}
}

func TestMaxTokensClippedToTheModel(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	b.srv.Script(providertest.Text("a"), providertest.Text("b"))
	req := ask("hello")
	req.Model = "claude-3-5-haiku-latest"
	req.Limits.MaxTokens = 100000
	if _, _, err := collect(t, b.p, req); err != nil {
		t.Fatal(err)
	}
	req.Limits.MaxTokens = 0
	if _, _, err := collect(t, b.p, req); err != nil {
		t.Fatal(err)
	}
	served := b.srv.Served()
	if a, b := fmt.Sprint(served[0].JSON()["max_tokens"]), fmt.Sprint(served[1].JSON()["max_tokens"]); a != "8192" || b != "4096" {
		t.Errorf("max_tokens = %s and %s, want 8192 (the model's ceiling) and 4096 (the default)", a, b)
	}
}

func TestCapabilities(t *testing.T) {
	t.Parallel()
	c := anthropic.Capabilities("claude-opus-4-1")
	if !c.Streaming || !c.Tools || !c.StreamingToolArgs || !c.Images || c.Documents || c.SystemPrompt != provider.SystemBlocks || c.MaxOutputTokens != 32000 {
		t.Errorf("capabilities = %+v", c)
	}
}

func TestImagePart(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	b.srv.Script(providertest.Text("a cat"))
	req := ask("what is this?")
	req.Messages[0].Parts = append(req.Messages[0].Parts, provider.Image{MediaType: "image/png", Data: []byte("\x89PNG")})
	if _, _, err := collect(t, b.p, req); err != nil {
		t.Fatal(err)
	}
	img := b.srv.Served()[0].JSON()["messages"].([]any)[0].(map[string]any)["content"].([]any)[1]
	if got := mustJSON(img); got != `{"source":{"data":"iVBORw==","media_type":"image/png","type":"base64"},"type":"image"}` {
		t.Errorf("image block = %s", got)
	}
}
