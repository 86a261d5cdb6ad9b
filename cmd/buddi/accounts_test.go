package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/internal/pgtest"
)

func TestAccountsCommands(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	home, _, vars := env(t, "DATABASE_URL="+dsn, "BUDDI_VAULT_KEY=aGVsbG8taGVsbG8taGVsbG8taGVsbG8taGVsbG8tISE=")
	mkdir(t, home)
	if code, _, _ := runBuddi(t, vars, 2*time.Minute, "db", "migrate"); code != 0 {
		t.Fatal("db migrate failed")
	}
	code, out, errOut := runBuddi(t, vars, time.Minute, "accounts", "add", "work", "--wire", "openai", "--base-url", "http://127.0.0.1:1/v1", "--secret", "OPENAI_WORK")
	if code != 0 || !strings.Contains(out, "buddi vault set OPENAI_WORK") {
		t.Fatalf("add: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, _ := runBuddi(t, vars, time.Minute, "accounts", "add", "sub", "--wire", "openai", "--kind", "subscription-token", "--secret", "X_Y"); code != 2 {
		t.Errorf("openai with a subscription token: exit %d, want 2", code)
	}
	if code, _, _ := runBuddi(t, vars, time.Minute, "accounts", "add", "work", "--wire", "openai", "--secret", "OPENAI_WORK"); code != 1 {
		t.Errorf("a second account named work: exit %d, want 1", code)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "set", "@dev", "--account", "work", "--model", "gpt-5"); code != 0 || !strings.Contains(out, "@dev runs on work") {
		t.Errorf("agents set: exit %d\n%s%s", code, out, errOut)
	}
	// The handle without its @ names the agent too; --json says both its id and handle.
	code, out, errOut = runBuddi(t, vars, time.Minute, "agents", "set", "dev", "--account", "work", "--model", "gpt-5", "--json")
	type assigned struct {
		OK                         bool
		ID, Handle, Account, Model string
	}
	var set assigned
	if code != 0 || json.Unmarshal([]byte(out), &set) != nil || set != (assigned{true, "developer", "@dev", "work", "gpt-5"}) {
		t.Errorf("agents set --json: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "accounts", "remove", "work"); code != 1 || !strings.Contains(errOut, "developer") {
		t.Errorf("remove while in use: exit %d\n%s", code, errOut)
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "accounts", "disable", "work", "--json")
	var disabled map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &disabled) != nil || disabled["ok"] != true || disabled["name"] != "work" || disabled["enabled"] != false {
		t.Errorf("disable --json: exit %d\n%s", code, out)
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "accounts", "list", "--json")
	var list []struct {
		Name    string
		Enabled bool
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0].Enabled {
		t.Errorf("list --json after disable: exit %d\n%s", code, out)
	}
	// The account's secret is not in the vault: agents test says what to do, exit 3.
	if code, _, errOut := runBuddi(t, vars, time.Minute, "agents", "test", "@dev"); code != 3 || !strings.Contains(errOut, "buddi vault set OPENAI_WORK") {
		t.Errorf("agents test without the secret: exit %d\n%s", code, errOut)
	}
	// The hint names the agent as the owner knows it: its handle, never its id.
	if code, _, errOut := runBuddi(t, vars, time.Minute, "agents", "test", "@buddi"); code != 3 ||
		!strings.Contains(errOut, "@buddi has no provider account") || !strings.Contains(errOut, "`buddi agents set @buddi --account") || strings.Contains(errOut, "concierge") {
		t.Errorf("agents test with no account: exit %d\n%s", code, errOut)
	}
	// With the account enabled and its secret in the vault the probe runs; nothing answers
	// at the account's address, and --json says so, exit 1.
	if code, out, _ := runBuddi(t, vars, time.Minute, "accounts", "enable", "work", "--json"); code != 0 || !strings.Contains(out, `"enabled": true`) {
		t.Errorf("enable --json: exit %d\n%s", code, out)
	}
	code, out, errOut = runWithInput(t, vars, "sk-test\n", "vault", "set", "OPENAI_WORK", "--json")
	var stored map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &stored) != nil || stored["ok"] != true || stored["name"] != "OPENAI_WORK" || strings.Contains(out, "sk-test") {
		t.Errorf("vault set --json: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runBuddi(t, vars, time.Minute, "agents", "test", "dev", "--json")
	var tested struct {
		OK                                   bool
		Sentence, ID, Handle, Account, Model string
	}
	if code != 1 || json.Unmarshal([]byte(out), &tested) != nil || tested.OK || tested.Sentence == "" ||
		tested.ID != "developer" || tested.Handle != "@dev" || tested.Account != "work" || tested.Model != "gpt-5" {
		t.Errorf("agents test --json with nothing at the address: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, _ := runBuddi(t, vars, time.Minute, "accounts", "show", "nope"); code != 1 {
		t.Errorf("show unknown: exit %d, want 1", code)
	}
	// Whoever can write the database points the account elsewhere: it is listed as not
	// sealed, never enabled or used, and adding it again through buddi re-creates it.
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE core.provider_accounts SET base_url = 'http://evil.example/v1' WHERE name = 'work'`); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "accounts", "list"); code != 0 || !strings.Contains(out, "NOT SEALED") || !strings.Contains(out, "add it again") {
		t.Errorf("list with a forged account: exit %d\n%s", code, out)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "accounts", "enable", "work"); code != 1 || !strings.Contains(errOut, "refused") {
		t.Errorf("enable a forged account: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "agents", "test", "@dev"); code != 1 || !strings.Contains(errOut, "refused") {
		t.Errorf("agents test on a forged account: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "accounts", "add", "work", "--wire", "openai", "--base-url", "http://127.0.0.1:1/v1", "--secret", "OPENAI_WORK"); code != 0 {
		t.Errorf("add it again: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "accounts", "list"); code != 0 || strings.Contains(out, "NOT SEALED") || strings.Contains(out, "evil.example") {
		t.Errorf("list after adding it again: exit %d\n%s", code, out)
	}
}
