package account

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"buddi/runtime/provider"
	"buddi/runtime/provider/anthropic"
	"buddi/runtime/provider/openai"
	"buddi/runtime/transport"
)

// New builds the provider for account a with secret (read from the vault by the caller),
// over the one outbound transport configured by tc.
func New(a Account, secret string, tc transport.Config) (provider.Provider, error) {
	if !a.Enabled {
		return nil, fmt.Errorf("account %s is disabled: enable it with `buddi accounts enable %s`", a.Name, a.Name)
	}
	cred := provider.NewCredential(a.Kind, secret)
	client := transport.New(tc).Client()
	switch a.Wire {
	case provider.WireAnthropic:
		return anthropic.New(anthropic.Config{Credential: cred, BaseURL: a.BaseURL, HTTPClient: client})
	case provider.WireOpenAI:
		return openai.New(openai.Config{Credential: cred, BaseURL: a.BaseURL, HTTPClient: client})
	}
	return nil, fmt.Errorf("account %s: wire %q: %w", a.Name, a.Wire, ErrInvalid)
}

// Probe sends one short prompt through p with model and says in one sentence whether it
// works and, if not, why (the provider error's sentence for a person). ok reports which.
func Probe(ctx context.Context, p provider.Provider, model string) (sentence string, ok bool) {
	start := time.Now()
	res, err := p.Stream(ctx, provider.Request{
		Model:    model,
		Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{provider.Text{Text: "Reply with the single word OK."}}}},
		Limits:   provider.Limits{MaxTokens: 16, Timeout: 30 * time.Second},
	}, func(provider.Event) {})
	if err != nil {
		var perr *provider.Error
		if errors.As(err, &perr) {
			return perr.Sentence(), false
		}
		return fmt.Sprintf("The call failed: %v.", err), false
	}
	var text strings.Builder
	for _, part := range res.Message.Parts {
		if t, isText := part.(provider.Text); isText {
			text.WriteString(t.Text)
		}
	}
	reply := strings.TrimSpace(text.String())
	if len(reply) > 40 {
		reply = reply[:40] + "…"
	}
	return fmt.Sprintf("It works: %s answered %q in %s.", model, reply, time.Since(start).Round(time.Millisecond)), true
}
