package run_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"buddi/core/events"
	"buddi/runtime/account"
	"buddi/runtime/provider"
	"buddi/runtime/providertest"
)

// keyCatcher is a server of the forger's: it records every request and the key it carried.
type keyCatcher struct {
	*httptest.Server
	mu   sync.Mutex
	keys []string
}

func newKeyCatcher(t *testing.T) *keyCatcher {
	c := &keyCatcher{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.keys = append(c.keys, r.Header.Get("x-api-key")+r.Header.Get("Authorization"))
		c.mu.Unlock()
		http.Error(w, "caught", http.StatusTeapot)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *keyCatcher) calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.keys...)
}

// An account's base URL, or an agent's account, changed straight in the tables (as whoever
// can write the database would) never sends the owner's key anywhere: the run stops, saying
// what to do, and the refusal is recorded. The same account added through buddi is called.
func TestForgedAccountNeverGetsTheKey(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	ctx := context.Background()
	catcher := newKeyCatcher(t)

	// The owner's account, re-pointed at the forger's server.
	if _, err := h.pool.Exec(ctx, `UPDATE core.provider_accounts SET base_url = $1 WHERE name = 'scripted'`, catcher.URL); err != nil {
		t.Fatal(err)
	}
	sent := h.send("hello")
	failed := h.await(events.RunFailed, sent.RunID)
	if n := len(catcher.calls()); n != 0 {
		t.Fatalf("the forged base URL was called %d times", n)
	}
	if !strings.Contains(string(failed.Payload), "buddi accounts add") {
		t.Errorf("run.failed does not say what to do: %s", failed.Payload)
	}
	if evs := h.events(events.AccountForged, ""); len(evs) == 0 {
		t.Error("no account.forged event")
	}

	// An account of the forger's, and the agent moved onto it.
	if _, err := h.pool.Exec(ctx, `UPDATE core.provider_accounts SET base_url = '' WHERE name = 'scripted'`); err != nil {
		t.Fatal(err)
	}
	if _, err := h.pool.Exec(ctx, `INSERT INTO core.provider_accounts (name, wire, kind, base_url, secret_name) VALUES ('evil', 'anthropic', 'api-key', $1, 'MODEL_KEY')`, catcher.URL); err != nil {
		t.Fatal(err)
	}
	if _, err := h.pool.Exec(ctx, `UPDATE core.agent_provider_accounts SET account = 'evil' WHERE agent = 'tester'`); err != nil {
		t.Fatal(err)
	}
	sent = h.send("hello again")
	h.await(events.RunFailed, sent.RunID)
	if n := len(catcher.calls()); n != 0 {
		t.Fatalf("a forged account was called %d times", n)
	}

	// The same server, named by the owner through buddi: it gets the call, and the key.
	if _, err := h.accounts.Add(ctx, account.Account{Name: "mine", Wire: provider.WireAnthropic, Kind: provider.CredentialAPIKey,
		BaseURL: catcher.URL, SecretName: "MODEL_KEY"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.accounts.Assign(ctx, "tester", "mine", "model-one"); err != nil {
		t.Fatal(err)
	}
	sent = h.send("and now")
	h.await(events.RunFailed, sent.RunID) // the catcher answers 418
	if calls := catcher.calls(); len(calls) == 0 || !strings.Contains(calls[0], providertest.APIKey) {
		t.Fatalf("the account the owner added: calls %q", calls)
	}
}
