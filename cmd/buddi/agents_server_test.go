package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pt "buddi/runtime/providertest"
)

// agents list and agents test ask the running buddi: with the vault key only in the command
// line's shell, the server's vault is locked, and neither says the agent is ready.
func TestAgentsAskTheRunningServer(t *testing.T) {
	t.Parallel()
	model := pt.New(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, model.CAPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	home, port, served := env(t, "SSL_CERT_FILE="+ca)
	cli := append(append([]string{}, served...), "BUDDI_VAULT_KEY=aGVsbG8taGVsbG8taGVsbG8taGVsbG8taGVsbG8tISE=")
	if code, out, errOut := runWithInput(t, cli, pt.APIKey+"\n", "vault", "set", "MODEL_KEY"); code != 0 {
		t.Fatalf("vault set: %d %s%s", code, out, errOut)
	}
	for _, args := range [][]string{
		{"db", "migrate"},
		{"accounts", "add", "scripted", "--wire", "anthropic", "--base-url", model.URL, "--secret", "MODEL_KEY"},
		{"agents", "set", "@dev", "--account", "scripted", "--model", "model-one"},
	} {
		if code, out, errOut := runBuddi(t, cli, 2*time.Minute, args...); code != 0 {
			t.Fatalf("%v: %d %s%s", args, code, out, errOut)
		}
	}
	// Without a server, the command line checks for itself, with its own key: ready.
	if code, out, errOut := runBuddi(t, cli, time.Minute, "agents", "list"); code != 0 || !strings.Contains(out, "ready") {
		t.Fatalf("agents list without a server: %d\n%s%s", code, out, errOut)
	}
	s := startServe(t, home, port, served) // the server has no key: its vault is locked
	s.health()
	code, out, errOut := runBuddi(t, cli, time.Minute, "agents", "list", "--json")
	var list []struct {
		ID        string `json:"id"`
		Available bool   `json:"available"`
		Problem   string `json:"problem"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil {
		t.Fatalf("agents list --json: %d\n%s%s", code, out, errOut)
	}
	for _, a := range list {
		if a.ID == "developer" && (a.Available || !strings.Contains(strings.ToLower(a.Problem), "vault")) {
			t.Fatalf("@dev with the server's vault locked: %+v", a)
		}
	}
	code, out, errOut = runBuddi(t, cli, time.Minute, "agents", "test", "@dev")
	if code == 0 || strings.Contains(out, "It works") || !strings.Contains(strings.ToLower(errOut), "vault") {
		t.Fatalf("agents test @dev with the server's vault locked: exit %d\n%s%s", code, out, errOut)
	}
	if n := len(model.Requests()); n != 0 {
		t.Fatalf("%d requests reached the model: a probe went out with the command line's key", n)
	}
}
