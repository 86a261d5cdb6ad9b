package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"buddi/runtime/provider"
	"buddi/runtime/transport"
)

// ClaudeCodeIdentity is the system block that /v1/messages requires, exactly and as its own
// first block, of a request authenticated with a subscription token.
const ClaudeCodeIdentity = "You are Claude Code, Anthropic's official CLI for Claude."

// OAuthBeta is the anthropic-beta value sent with a subscription token.
const OAuthBeta = "oauth-2025-04-20"

// DefaultUserAgent is the User-Agent of every request unless Config.UserAgent says otherwise.
const DefaultUserAgent = "buddi"

// Config configures a [Provider]. Credential is required; every other zero field takes the
// default named on it. Nothing is read from the environment.
type Config struct {
	// Credential authenticates the account: an api-key or a subscription-token.
	Credential provider.Credential
	// BaseURL is the API's origin (and path prefix). Default https://api.anthropic.com; an
	// api-key account may name another (a gateway), a subscription token may not.
	BaseURL string
	// HTTPClient sends the requests; it should be the runtime transport's client. Default:
	// a client of a transport.New(transport.Config{}).
	HTTPClient *http.Client
	// Retry is the retry policy; the zero value is the port's default.
	Retry provider.RetryPolicy
	// UserAgent is the User-Agent header. Default [DefaultUserAgent].
	UserAgent string
}

// Provider is the Anthropic Messages wire. Build it with [New].
type Provider struct {
	cfg          Config
	svc          sdk.MessageService
	subscription bool
	now          func() time.Time
}

var _ provider.Provider = (*Provider)(nil)

// New returns a provider for cfg, or an error wrapping [provider.ErrCredentialInvariant]
// when the credential, its kind and the base URL do not go together.
func New(cfg Config) (*Provider, error) {
	if err := provider.CheckCredential(provider.WireAnthropic, cfg.Credential, cfg.BaseURL); err != nil {
		return nil, err
	}
	base := cfg.BaseURL
	if base == "" {
		base = provider.AnthropicDefaultBaseURL
	}
	client := cfg.HTTPClient
	if client == nil {
		client = transport.New(transport.Config{}).Client()
	}
	ua := cfg.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(client),
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
		option.WithoutOpenTelemetry(),
		option.WithOpenTelemetryPropagation(false),
		option.WithHeader("User-Agent", ua),
		option.WithMiddleware(stripSDKHeaders),
	}
	p := &Provider{cfg: cfg, now: cfg.Retry.Now}
	if p.now == nil {
		p.now = time.Now
	}
	switch cfg.Credential.Kind() {
	case provider.CredentialAPIKey:
		opts = append(opts, option.WithAPIKey(cfg.Credential.Secret()))
	case provider.CredentialSubscriptionToken:
		p.subscription = true
		opts = append(opts, option.WithAuthToken(cfg.Credential.Secret()), option.WithHeader("Anthropic-Beta", OAuthBeta))
	}
	p.svc = sdk.NewMessageService(opts...)
	return p, nil
}

// stripSDKHeaders removes the SDK's X-Stainless-* headers (language, OS, architecture,
// runtime version, retry count): nothing about this machine leaves that the call needs.
func stripSDKHeaders(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	for k := range req.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-stainless-") {
			req.Header.Del(k)
		}
	}
	return next(req)
}

// Wire returns [provider.WireAnthropic].
func (p *Provider) Wire() provider.Wire { return provider.WireAnthropic }

// Capabilities returns this adapter's row of the capability matrix for model. Native web
// search is Anthropic's own service: a gateway at another base URL may not offer it.
func (p *Provider) Capabilities(model string) provider.Capabilities {
	caps := Capabilities(model)
	if p.cfg.BaseURL != "" && strings.TrimRight(p.cfg.BaseURL, "/") != strings.TrimRight(provider.AnthropicDefaultBaseURL, "/") {
		caps.NativeWebSearch = false
	}
	return caps
}

// searchModels are the model families the Messages API's web search tool serves.
var searchModels = []string{"claude-opus-4", "claude-sonnet-4", "claude-haiku-4", "claude-3-7-sonnet", "claude-3-5-sonnet", "claude-3-5-haiku"}

// nativeSearch reports whether model is one the web search tool serves.
func nativeSearch(model string) bool {
	for _, prefix := range searchModels {
		if strings.HasPrefix(model, prefix) {
			return true
		}
	}
	return false
}

// maxOutput is the output token ceiling of the model families this adapter knows; an
// unknown model gets the conservative fallback.
var maxOutput = []provider.ModelLimit{
	{Prefix: "claude-3-haiku", MaxOutputTokens: 4096},
	{Prefix: "claude-3-opus", MaxOutputTokens: 4096},
	{Prefix: "claude-3-5", MaxOutputTokens: 8192},
	{Prefix: "claude-3-7-sonnet", MaxOutputTokens: 64000},
	{Prefix: "claude-sonnet-4", MaxOutputTokens: 64000},
	{Prefix: "claude-haiku-4", MaxOutputTokens: 64000},
	{Prefix: "claude-opus-4", MaxOutputTokens: 32000},
}

// Capabilities is the adapter's row of the capability matrix for model.
func Capabilities(model string) provider.Capabilities {
	return provider.Capabilities{
		Wire:               provider.WireAnthropic,
		Model:              model,
		Streaming:          true,
		StreamingToolArgs:  true,
		Tools:              true,
		ParallelToolCalls:  true,
		Images:             true,
		Documents:          false,
		ToolResultOrdering: provider.ToolResultsNextUserMessage,
		Cancellation:       true,
		UsageReporting:     true,
		NativeWebSearch:    nativeSearch(model),
		SystemPrompt:       provider.SystemBlocks,
		MaxOutputTokens:    provider.LookupMaxOutputTokens(maxOutput, model, 8192),
	}
}

// Stream runs one turn on the Messages wire; see [provider.Provider].
func (p *Provider) Stream(ctx context.Context, req provider.Request, h provider.Handler) (provider.Result, error) {
	names, _ := provider.NewToolNames()
	params, err := p.params(req, names)
	if err != nil {
		return provider.Result{}, &provider.Error{Wire: provider.WireAnthropic, Kind: provider.KindConfig, Class: provider.Permanent, Err: err}
	}
	return p.cfg.Retry.Run(ctx, provider.WireAnthropic, req.Limits, h, func(ctx context.Context, emit provider.Handler) (provider.Result, error) {
		stream := p.svc.NewStreaming(ctx, params)
		defer stream.Close()
		res, err := readStream(stream, names, emit)
		if err != nil {
			return res, p.convert(err)
		}
		return res, nil
	})
}

// system returns the system blocks: for a subscription token the Claude Code identity
// first, as its own block, then the agent's prompt (left out when empty, as an empty text
// block is refused).
func (p *Provider) system(prompt string) []sdk.TextBlockParam {
	var blocks []sdk.TextBlockParam
	if p.subscription {
		blocks = append(blocks, sdk.TextBlockParam{Text: ClaudeCodeIdentity})
	}
	if prompt != "" {
		blocks = append(blocks, sdk.TextBlockParam{Text: prompt})
	}
	return blocks
}

// params translates a port request into the SDK's, mapping tool names on the way.
func (p *Provider) params(req provider.Request, names *provider.ToolNames) (sdk.MessageNewParams, error) {
	if err := req.Validate(); err != nil {
		return sdk.MessageNewParams{}, err
	}
	out := sdk.MessageNewParams{
		Model:     sdk.Model(req.Model),
		MaxTokens: int64(req.Limits.EffectiveMaxTokens(p.Capabilities(req.Model))),
		System:    p.system(req.System),
	}
	for _, t := range req.Tools {
		wire, err := names.Wire(t.Name)
		if err != nil {
			return out, err
		}
		encoded, err := encodedTool(wire, t)
		if err != nil {
			return out, err
		}
		out.Tools = append(out.Tools, param.Override[sdk.ToolUnionParam](encoded))
	}
	if req.WebSearch != nil {
		search := sdk.WebSearchTool20250305Param{}
		if req.WebSearch.MaxUses > 0 {
			search.MaxUses = sdk.Int(int64(req.WebSearch.MaxUses))
		}
		out.Tools = append(out.Tools, sdk.ToolUnionParam{OfWebSearchTool20250305: &search})
	}
	for i, m := range req.Messages {
		var blocks []sdk.ContentBlockParamUnion
		for _, part := range m.Parts {
			switch part := part.(type) {
			case provider.Text:
				if part.Text != "" {
					blocks = append(blocks, sdk.NewTextBlock(part.Text))
				}
			case provider.Image:
				blocks = append(blocks, sdk.NewImageBlockBase64(part.MediaType, base64.StdEncoding.EncodeToString(part.Data)))
			case provider.ToolCall:
				wire, err := names.Wire(part.Name)
				if err != nil {
					return out, err
				}
				args := json.RawMessage(part.Args)
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				blocks = append(blocks, sdk.NewToolUseBlock(part.ID, args, wire))
			case provider.ToolResult:
				result := sdk.ToolResultBlockParam{ToolUseID: part.CallID}
				if part.IsError {
					result.IsError = sdk.Bool(true)
				}
				if part.Content != "" {
					result.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: part.Content}}}
				}
				blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolResult: &result})
			}
		}
		if len(blocks) == 0 {
			return out, fmt.Errorf("message %d has no content to send", i)
		}
		role := sdk.MessageParamRoleUser
		if m.Role == provider.RoleAssistant {
			role = sdk.MessageParamRoleAssistant
		}
		out.Messages = append(out.Messages, sdk.MessageParam{Role: role, Content: blocks})
	}
	return out, nil
}

// toolCache keeps each tool's wire JSON, encoded once.
var toolCache provider.ToolCache

// encodedTool is the tool as the Messages wire takes it ({"name", "description",
// "input_schema"}), encoded once and then taken from toolCache.
func encodedTool(wire string, t provider.Tool) (json.RawMessage, error) {
	return toolCache.Encoded(wire, t, func() (json.RawMessage, error) {
		schema, err := inputSchema(t.Schema)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		tool := sdk.ToolParam{Name: wire, InputSchema: schema}
		if t.Description != "" {
			tool.Description = sdk.String(t.Description)
		}
		b, err := json.Marshal(tool)
		if err != nil {
			return nil, fmt.Errorf("tool %s: encode: %w", t.Name, err)
		}
		return b, nil
	})
}

// inputSchema turns a tool's JSON Schema into the SDK's input schema, which must be an
// object schema.
func inputSchema(raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var m map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return sdk.ToolInputSchemaParam{}, fmt.Errorf("schema: %w", err)
		}
	}
	if t, ok := m["type"]; ok && t != "object" {
		return sdk.ToolInputSchemaParam{}, fmt.Errorf("schema type %v: a tool takes an object", t)
	}
	s := sdk.ToolInputSchemaParam{Properties: m["properties"]}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	extra := map[string]any{}
	for k, v := range m {
		if k != "type" && k != "properties" && k != "required" {
			extra[k] = v
		}
	}
	if len(extra) > 0 {
		s.ExtraFields = extra
	}
	return s, nil
}

// convert turns what the SDK reported into the port's error, classified. Transport and
// network failures are returned as they are, for the retry policy to classify with the
// knowledge of whether output had reached the handler.
func (p *Provider) convert(err error) error {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		return err
	}
	errType := string(apiErr.Type())
	msg := apiMessage(apiErr.RawJSON())
	if apiErr.Response != nil && apiErr.StatusCode == http.StatusOK {
		return provider.FromStreamError(provider.WireAnthropic, errType, msg, false, apiErr)
	}
	var header http.Header
	if apiErr.Response != nil {
		header = apiErr.Response.Header
	}
	return provider.FromStatus(provider.WireAnthropic, apiErr.StatusCode, errType, msg, header, p.now(), apiErr)
}

// apiMessage reads error.message from an error body.
func apiMessage(raw string) string {
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &body) != nil {
		return ""
	}
	return body.Error.Message
}
