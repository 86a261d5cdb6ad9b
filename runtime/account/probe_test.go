package account_test

import (
	"context"
	"strings"
	"testing"

	"buddi/runtime/account"
	"buddi/runtime/provider"
	"buddi/runtime/providertest"
)

func TestProbeSaysWhetherAnAccountWorks(t *testing.T) {
	t.Parallel()
	srv := providertest.New(t)
	for _, tt := range []struct {
		name   string
		wire   provider.Wire
		secret string
		reply  providertest.Reply
		ok     bool
		want   string
	}{
		{"openai works", provider.WireOpenAI, providertest.APIKey, providertest.Text("OK"), true, `answered "OK"`},
		{"anthropic works", provider.WireAnthropic, providertest.APIKey, providertest.Text("OK"), true, `answered "OK"`},
		{"refused key", provider.WireOpenAI, "sk-wrong", providertest.Reply{}, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.ok {
				srv.Script(tt.reply)
			}
			a := account.Account{Name: "work", Wire: tt.wire, Kind: provider.CredentialAPIKey, SecretName: "K", Enabled: true}
			if tt.wire == provider.WireOpenAI {
				a.BaseURL = srv.OpenAIBaseURL()
			}
			p, err := account.New(a, tt.secret, srv.TransportConfig())
			if err != nil {
				t.Fatal(err)
			}
			sentence, ok := account.Probe(context.Background(), p, "test-model")
			if ok != tt.ok || !strings.Contains(sentence, tt.want) || strings.Count(sentence, ".") < 1 {
				t.Errorf("Probe = %q, %v; want ok=%v saying %q", sentence, ok, tt.ok, tt.want)
			}
			if strings.Contains(sentence, tt.secret) {
				t.Errorf("the sentence shows the secret: %q", sentence)
			}
		})
	}
	disabled := account.Account{Name: "off", Wire: provider.WireOpenAI, Kind: provider.CredentialAPIKey, SecretName: "K"}
	if _, err := account.New(disabled, providertest.APIKey, srv.TransportConfig()); err == nil || !strings.Contains(err.Error(), "disabled") {
		t.Errorf("a disabled account gave a provider: %v", err)
	}
}
