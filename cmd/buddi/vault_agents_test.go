package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runWithInput runs the binary with stdin.
func runWithInput(t *testing.T, vars []string, input string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env, cmd.Stdin = vars, strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func TestVaultCommands(t *testing.T) {
	t.Parallel()
	home, _, vars := env(t, "BUDDI_VAULT_KEY=aGVsbG8taGVsbG8taGVsbG8taGVsbG8taGVsbG8tISE=")
	const secret = "tok-3f9a1c77e2b4"
	if code, out, errOut := runWithInput(t, vars, secret+"\n", "vault", "set", "TELEGRAM_BOT_TOKEN"); code != 0 {
		t.Fatalf("set: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ := runBuddi(t, vars, time.Minute, "vault", "get", "TELEGRAM_BOT_TOKEN")
	if code != 0 || !strings.Contains(out, "present") || strings.Contains(out, secret) {
		t.Errorf("get: exit %d, %q: want present, value never printed", code, out)
	}
	raw, err := os.ReadFile(filepath.Join(home, "vault.json"))
	if err != nil || bytes.Contains(raw, []byte(secret)) {
		t.Errorf("vault file: %v; the value must not be there in clear", err)
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "vault", "list", "--json")
	var names []string
	if code != 0 || json.Unmarshal([]byte(out), &names) != nil || len(names) != 1 || names[0] != "TELEGRAM_BOT_TOKEN" {
		t.Errorf("list --json: exit %d %q", code, out)
	}
	if code, _, _ := runWithInput(t, vars, "x\n", "vault", "set", "bad name"); code != 2 {
		t.Errorf("set with a bad name: exit %d, want 2", code)
	}
	// A wrong key fails closed: exit 3, nothing read.
	wrong := append([]string{}, vars...)
	wrong = append(wrong, "BUDDI_VAULT_KEY=d3Jvbmctd3Jvbmctd3Jvbmctd3Jvbmctd3Jvbmc9PT0=")
	if code, out, errOut := runBuddi(t, wrong, time.Minute, "vault", "get", "TELEGRAM_BOT_TOKEN"); code != 3 || strings.Contains(out+errOut, secret) {
		t.Errorf("get with a wrong key: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, _ := runBuddi(t, vars, time.Minute, "vault", "delete", "TELEGRAM_BOT_TOKEN"); code != 0 {
		t.Errorf("delete: exit %d", code)
	}
	if code, _, _ := runBuddi(t, vars, time.Minute, "vault", "get", "TELEGRAM_BOT_TOKEN"); code != 1 {
		t.Errorf("get after delete: exit %d, want 1", code)
	}
}

func TestAgentsCommands(t *testing.T) {
	t.Parallel()
	_, _, vars := env(t)
	code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "list", "--json")
	var list []struct {
		ID, Handle string
		Roles      []string
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) < 2 {
		t.Fatalf("agents list --json: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "agents", "show", "@dev")
	if code != 0 || !strings.Contains(out, "developer.") {
		t.Errorf("agents show @dev: exit %d\n%s", code, out)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "agents", "show", "@nobody"); code != 1 || !strings.Contains(errOut, "buddi agents list") {
		t.Errorf("agents show @nobody: exit %d\n%s", code, errOut)
	}
}

// A secret in the vault never reaches buddi serve's log: here the secret is also part of the
// data directory's path, which serve logs as it sets up the database.
func TestServeLogScrubsSecrets(t *testing.T) {
	t.Parallel()
	const key = "BUDDI_VAULT_KEY=aGVsbG8taGVsbG8taGVsbG8taGVsbG8taGVsbG8tISE="
	const secret = "sekrit-9d8c7b6a5f"
	_, port, vars := env(t, key)
	home := filepath.Join(t.TempDir(), secret, "home")
	vars = append(vars, "BUDDI_HOME="+home)
	if code, _, errOut := runWithInput(t, vars, secret, "vault", "set", "DB_PASSWORD"); code != 0 {
		t.Fatalf("vault set: %s", errOut)
	}
	s := startServe(t, home, port, vars)
	s.health()
	if code := s.stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if strings.Contains(s.log.String(), secret) {
		t.Errorf("the secret reached the log:\n%s", s.log.String())
	}
	if !strings.Contains(s.log.String(), "‹secret:DB_PASSWORD›") {
		t.Errorf("the log does not show the path redacted:\n%s", s.log.String())
	}
}
