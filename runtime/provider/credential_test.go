package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestCheckCredential(t *testing.T) {
	t.Parallel()
	key := NewCredential(CredentialAPIKey, "sk-live-123")
	token := NewCredential(CredentialSubscriptionToken, "sk-ant-oat01-abc")
	tests := []struct {
		name string
		wire Wire
		cred Credential
		base string
		ok   bool
	}{
		{"anthropic api key, default URL", WireAnthropic, key, "", true},
		{"anthropic api key, a gateway", WireAnthropic, key, "https://gateway.example/anthropic", true},
		{"subscription token, default URL", WireAnthropic, token, "", true},
		{"subscription token, the default URL spelled out", WireAnthropic, token, "https://api.anthropic.com/", true},
		{"subscription token, custom base URL", WireAnthropic, token, "https://evil.example", false},
		{"subscription token, loopback", WireAnthropic, token, "http://127.0.0.1:8080", false},
		{"subscription token on the openai wire", WireOpenAI, token, "", false},
		{"a token given as an api key", WireAnthropic, NewCredential(CredentialAPIKey, "sk-ant-oat01-x"), "", false},
		{"an api key given as a token", WireAnthropic, NewCredential(CredentialSubscriptionToken, "sk-live"), "", false},
		{"openai api key, compatible endpoint", WireOpenAI, key, "http://localhost:11434/v1", true},
		{"openai, token-shaped key", WireOpenAI, NewCredential(CredentialAPIKey, "sk-ant-oat01-x"), "", false},
		{"missing secret", WireOpenAI, NewCredential(CredentialAPIKey, ""), "", false},
		{"base URL with user info", WireOpenAI, key, "https://user:pw@host/v1", false},
		{"base URL not http", WireOpenAI, key, "file:///etc/passwd", false},
		{"unknown wire", Wire("smoke-signals"), key, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := CheckCredential(tt.wire, tt.cred, tt.base)
			if (err == nil) != tt.ok {
				t.Fatalf("CheckCredential = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrCredentialInvariant) {
				t.Errorf("error %v does not wrap ErrCredentialInvariant", err)
			}
			if err != nil && strings.Contains(err.Error(), tt.cred.Secret()) && tt.cred.Secret() != "" {
				t.Errorf("error %q shows the secret", err)
			}
		})
	}
}

func TestCredentialNeverPrints(t *testing.T) {
	t.Parallel()
	const secret = "sk-ant-oat01-very-secret"
	c := NewCredential(CredentialSubscriptionToken, secret)
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("call", "cred", c)
	j, _ := json.Marshal(struct{ C Credential }{c})
	for _, s := range []string{
		fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s %q", c, c, c, c, c),
		fmt.Sprintf("%+v", struct{ C Credential }{c}), logged.String(), string(j),
	} {
		if strings.Contains(s, secret) || strings.Contains(s, "very-secret") {
			t.Errorf("secret shown: %s", s)
		}
	}
	if c.Secret() != secret {
		t.Errorf("Secret() = %q", c.Secret())
	}
}
