package provider

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
)

// CredentialKind is how a credential authenticates on its wire.
type CredentialKind string

// The credential kinds.
const (
	// CredentialAPIKey is a provider API key: x-api-key on the Anthropic wire, a Bearer
	// token on the OpenAI wire.
	CredentialAPIKey CredentialKind = "api-key"
	// CredentialSubscriptionToken is the sk-ant-oat01-… token that `claude setup-token`
	// prints, billed to the owner's Claude subscription. Anthropic wire only, default base
	// URL only, sent as Authorization: Bearer with the Claude Code system block first.
	CredentialSubscriptionToken CredentialKind = "subscription-token"
)

// SubscriptionTokenPrefix starts every Claude subscription token.
const SubscriptionTokenPrefix = "sk-ant-oat"

// Credential is the secret one provider account authenticates with. The caller reads it
// (from the vault, or from .env by explicit name) and passes it in; no adapter reads the
// environment. It never prints: fmt, slog and encoding/json all show it redacted.
type Credential struct {
	kind   CredentialKind
	secret string
}

// NewCredential returns a credential of kind with secret.
func NewCredential(kind CredentialKind, secret string) Credential {
	return Credential{kind: kind, secret: secret}
}

// Kind returns the credential's kind.
func (c Credential) Kind() CredentialKind { return c.kind }

// Secret returns the secret itself, for the one header that carries it.
func (c Credential) Secret() string { return c.secret }

// IsZero reports whether c holds no secret.
func (c Credential) IsZero() bool { return c.secret == "" }

// String shows the kind and hides the secret.
func (c Credential) String() string {
	if c.secret == "" {
		return fmt.Sprintf("%s(empty)", c.kind)
	}
	return fmt.Sprintf("%s(‹redacted›)", c.kind)
}

// Format prints c as [Credential.String] for every verb, %#v and %+v included.
func (c Credential) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// LogValue shows c redacted in slog.
func (c Credential) LogValue() slog.Value { return slog.StringValue(c.String()) }

// MarshalJSON shows c redacted.
func (c Credential) MarshalJSON() ([]byte, error) { return []byte(`"` + c.String() + `"`), nil }

// CredentialInvariant names the rule that [CheckCredential] enforces.
const CredentialInvariant = "PROVIDER_CREDENTIAL_INVARIANT"

// ErrCredentialInvariant is the error of every combination of wire, credential kind and base
// URL that PROVIDER_CREDENTIAL_INVARIANT refuses.
var ErrCredentialInvariant = errors.New("provider: " + CredentialInvariant)

// AnthropicDefaultBaseURL is the Anthropic API's origin, the only one a subscription token
// may be sent to.
const AnthropicDefaultBaseURL = "https://api.anthropic.com"

// CheckCredential enforces PROVIDER_CREDENTIAL_INVARIANT: wire, credential kind and
// destination are one choice. A subscription token goes to the Anthropic wire at its
// default base URL and nowhere else (a subscription token with a custom base URL is token
// exfiltration); the OpenAI wire takes api keys only; an empty secret is refused; and a
// secret of the other kind's shape is refused before it is sent where it does not belong.
// baseURL is the configured base URL, empty for the wire's default.
func CheckCredential(wire Wire, c Credential, baseURL string) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrCredentialInvariant, fmt.Sprintf(format, args...))
	}
	if c.IsZero() {
		return fail("%s wire: missing credential", wire)
	}
	if baseURL != "" {
		u, err := url.Parse(baseURL)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return fail("base URL %q is not an http(s) URL", baseURL)
		}
		if u.User != nil {
			return fail("base URL carries user information")
		}
	}
	looksLikeToken := strings.HasPrefix(c.secret, SubscriptionTokenPrefix)
	switch wire {
	case WireAnthropic:
		switch c.kind {
		case CredentialAPIKey:
			if looksLikeToken {
				return fail("a subscription token given as an api-key")
			}
		case CredentialSubscriptionToken:
			if !looksLikeToken {
				return fail("a subscription token must start with %s", SubscriptionTokenPrefix)
			}
			if baseURL != "" && strings.TrimSuffix(baseURL, "/") != AnthropicDefaultBaseURL {
				return fail("a subscription token goes to %s only, not %q", AnthropicDefaultBaseURL, baseURL)
			}
		default:
			return fail("anthropic wire: unknown credential kind %q", c.kind)
		}
	case WireOpenAI:
		if c.kind != CredentialAPIKey {
			return fail("openai wire takes an api-key only, not %q", c.kind)
		}
		if looksLikeToken {
			return fail("a Claude subscription token never goes to the openai wire")
		}
	default:
		return fail("unknown wire %q", wire)
	}
	return nil
}
