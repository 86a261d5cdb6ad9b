package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"buddi/runtime/provider"
	"buddi/runtime/transport"
)

// DefaultBaseURL is OpenAI's API, the base URL when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultUserAgent is the User-Agent of every request unless Config.UserAgent says otherwise.
const DefaultUserAgent = "buddi"

// Config configures a [Provider]. Credential is required; every other zero field takes the
// default named on it. Nothing is read from the environment.
type Config struct {
	// Credential is the account's api key.
	Credential provider.Credential
	// BaseURL is the endpoint's base, to which "chat/completions" is added. Default
	// [DefaultBaseURL]; a compatible endpoint names its own (http://host:port/v1).
	BaseURL string
	// Organization, when set, is sent as OpenAI-Organization. Default: not sent.
	Organization string
	// Project, when set, is sent as OpenAI-Project. Default: not sent.
	Project string
	// LegacyMaxTokens sends the limit as max_tokens, for compatible endpoints that do not
	// know max_completion_tokens. Default false: max_completion_tokens, which OpenAI's
	// current models require.
	LegacyMaxTokens bool
	// HTTPClient sends the requests; it should be the runtime transport's client. Default:
	// a client of a transport.New(transport.Config{}).
	HTTPClient *http.Client
	// Retry is the retry policy; the zero value is the port's default.
	Retry provider.RetryPolicy
	// UserAgent is the User-Agent header. Default [DefaultUserAgent].
	UserAgent string
}

// Provider is the Chat Completions wire. Build it with [New].
type Provider struct {
	cfg Config
	svc sdk.ChatCompletionService
	now func() time.Time
}

var _ provider.Provider = (*Provider)(nil)

// New returns a provider for cfg, or an error wrapping [provider.ErrCredentialInvariant]
// when the credential is not an api key or the base URL is not an http(s) URL.
func New(cfg Config) (*Provider, error) {
	if err := provider.CheckCredential(provider.WireOpenAI, cfg.Credential, cfg.BaseURL); err != nil {
		return nil, err
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
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
		option.WithAPIKey(cfg.Credential.Secret()),
		option.WithHeader("User-Agent", ua),
		option.WithMiddleware(stripSDKHeaders),
	}
	if cfg.Organization != "" {
		opts = append(opts, option.WithOrganization(cfg.Organization))
	}
	if cfg.Project != "" {
		opts = append(opts, option.WithProject(cfg.Project))
	}
	p := &Provider{cfg: cfg, svc: sdk.NewChatCompletionService(opts...), now: cfg.Retry.Now}
	if p.now == nil {
		p.now = time.Now
	}
	return p, nil
}

// stripSDKHeaders removes the SDK's X-Stainless-* headers (language, OS, architecture,
// runtime version, retry count): a compatible endpoint learns nothing the call does not need.
func stripSDKHeaders(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	for k := range req.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-stainless-") {
			req.Header.Del(k)
		}
	}
	return next(req)
}

// Wire returns [provider.WireOpenAI].
func (p *Provider) Wire() provider.Wire { return provider.WireOpenAI }

// Capabilities returns this adapter's row of the capability matrix for model.
func (p *Provider) Capabilities(model string) provider.Capabilities { return Capabilities(model) }

// maxOutput is the output token ceiling of the OpenAI model families this adapter knows; a
// model of a compatible endpoint gets the conservative fallback.
var maxOutput = []provider.ModelLimit{
	{Prefix: "gpt-4o", MaxOutputTokens: 16384},
	{Prefix: "gpt-4.1", MaxOutputTokens: 32768},
	{Prefix: "gpt-5", MaxOutputTokens: 128000},
	{Prefix: "o3", MaxOutputTokens: 100000},
	{Prefix: "o4-mini", MaxOutputTokens: 100000},
}

// Capabilities is the adapter's row of the capability matrix for model.
func Capabilities(model string) provider.Capabilities {
	return provider.Capabilities{
		Wire:               provider.WireOpenAI,
		Model:              model,
		Streaming:          true,
		StreamingToolArgs:  true,
		Tools:              true,
		ParallelToolCalls:  true,
		Images:             true,
		Documents:          false,
		ToolResultOrdering: provider.ToolResultsNextMessages,
		Cancellation:       true,
		UsageReporting:     true,
		NativeWebSearch:    false,
		SystemPrompt:       provider.SystemMessage,
		MaxOutputTokens:    provider.LookupMaxOutputTokens(maxOutput, model, 4096),
	}
}

// Stream runs one turn on the Chat Completions wire; see [provider.Provider].
func (p *Provider) Stream(ctx context.Context, req provider.Request, h provider.Handler) (provider.Result, error) {
	names, _ := provider.NewToolNames()
	params, err := p.params(req, names)
	if err != nil {
		return provider.Result{}, &provider.Error{Wire: provider.WireOpenAI, Kind: provider.KindConfig, Class: provider.Permanent, Err: err}
	}
	return p.cfg.Retry.Run(ctx, provider.WireOpenAI, req.Limits, h, func(ctx context.Context, emit provider.Handler) (provider.Result, error) {
		stream := p.svc.NewStreaming(ctx, params)
		defer stream.Close()
		res, err := readStream(stream, names, emit)
		if err != nil {
			return res, p.convert(err)
		}
		return res, nil
	})
}

// params translates a port request into the SDK's, mapping tool names on the way.
func (p *Provider) params(req provider.Request, names *provider.ToolNames) (sdk.ChatCompletionNewParams, error) {
	if err := req.Validate(); err != nil {
		return sdk.ChatCompletionNewParams{}, err
	}
	if req.WebSearch != nil {
		return sdk.ChatCompletionNewParams{}, errors.New("the openai wire has no native web search: offer web.search instead")
	}
	out := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	limit := int64(req.Limits.EffectiveMaxTokens(p.Capabilities(req.Model)))
	if p.cfg.LegacyMaxTokens {
		out.MaxTokens = sdk.Int(limit)
	} else {
		out.MaxCompletionTokens = sdk.Int(limit)
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
		out.Tools = append(out.Tools, param.Override[sdk.ChatCompletionToolUnionParam](encoded))
	}
	if req.System != "" {
		out.Messages = append(out.Messages, sdk.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		msgs, err := messages(m, names)
		if err != nil {
			return out, fmt.Errorf("message %d: %w", i, err)
		}
		out.Messages = append(out.Messages, msgs...)
	}
	return out, nil
}

// toolCache keeps each tool's wire JSON, encoded once.
var toolCache provider.ToolCache

// encodedTool is the tool as the Chat Completions wire takes it ({"type": "function",
// "function": {…}}), encoded once and then taken from toolCache.
func encodedTool(wire string, t provider.Tool) (json.RawMessage, error) {
	return toolCache.Encoded(wire, t, func() (json.RawMessage, error) {
		params := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
		if len(t.Schema) > 0 {
			params = shared.FunctionParameters{}
			if err := json.Unmarshal(t.Schema, &params); err != nil {
				return nil, fmt.Errorf("tool %s: schema: %w", t.Name, err)
			}
		}
		def := shared.FunctionDefinitionParam{Name: wire, Parameters: params}
		if t.Description != "" {
			def.Description = sdk.String(t.Description)
		}
		b, err := json.Marshal(sdk.ChatCompletionFunctionTool(def))
		if err != nil {
			return nil, fmt.Errorf("tool %s: encode: %w", t.Name, err)
		}
		return b, nil
	})
}

// messages translates one port message: an assistant message into one assistant message
// with its tool calls; a user message into a tool message per result (first, as the wire
// requires) and then a user message with its text and images.
func messages(m provider.Message, names *provider.ToolNames) ([]sdk.ChatCompletionMessageParamUnion, error) {
	if m.Role == provider.RoleAssistant {
		var text strings.Builder
		var calls []sdk.ChatCompletionMessageToolCallUnionParam
		for _, part := range m.Parts {
			switch part := part.(type) {
			case provider.Text:
				text.WriteString(part.Text)
			case provider.ToolCall:
				wire, err := names.Wire(part.Name)
				if err != nil {
					return nil, err
				}
				args := string(part.Args)
				if args == "" {
					args = "{}"
				}
				calls = append(calls, sdk.ChatCompletionMessageToolCallUnionParam{OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID: part.ID, Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: wire, Arguments: args},
				}})
			}
		}
		if text.Len() == 0 && len(calls) == 0 {
			return nil, errors.New("an assistant message with nothing to send")
		}
		msg := sdk.ChatCompletionAssistantMessageParam{ToolCalls: calls}
		if text.Len() > 0 {
			msg.Content.OfString = sdk.String(text.String())
		}
		return []sdk.ChatCompletionMessageParamUnion{{OfAssistant: &msg}}, nil
	}

	var out []sdk.ChatCompletionMessageParamUnion
	var content []sdk.ChatCompletionContentPartUnionParam
	for _, part := range m.Parts {
		switch part := part.(type) {
		case provider.ToolResult:
			text := part.Content
			if part.IsError {
				// The wire has no error flag on a tool message; say it in the content.
				text = "Error: " + text
			}
			out = append(out, sdk.ToolMessage(text, part.CallID))
		case provider.Text:
			if part.Text != "" {
				content = append(content, sdk.TextContentPart(part.Text))
			}
		case provider.Image:
			url := "data:" + part.MediaType + ";base64," + base64.StdEncoding.EncodeToString(part.Data)
			content = append(content, sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: url}))
		}
	}
	switch {
	case len(content) == 1 && content[0].OfText != nil:
		out = append(out, sdk.UserMessage(content[0].OfText.Text))
	case len(content) > 0:
		out = append(out, sdk.UserMessage(content))
	}
	if len(out) == 0 {
		return nil, errors.New("a user message with nothing to send")
	}
	return out, nil
}

// convert turns what the SDK reported into the port's error, classified. Transport and
// network failures are returned as they are, for the retry policy to classify with the
// knowledge of whether output had reached the handler.
func (p *Provider) convert(err error) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		errType := apiErr.Type
		if apiErr.Code != "" && (errType == "" || errType == "invalid_request_error") {
			errType = apiErr.Code
		}
		var header http.Header
		if apiErr.Response != nil {
			header = apiErr.Response.Header
		}
		return provider.FromStatus(provider.WireOpenAI, apiErr.StatusCode, errType, apiErr.Message, header, p.now(), apiErr)
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		var body struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
				Code    any    `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(streamErr.Event.Data, &body)
		errType := body.Error.Type
		if code, ok := body.Error.Code.(string); ok && errType == "" {
			errType = code
		}
		return provider.FromStreamError(provider.WireOpenAI, errType, body.Error.Message, false, streamErr)
	}
	return err
}
