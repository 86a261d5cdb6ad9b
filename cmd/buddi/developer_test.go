package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/internal/pgtest"
)

// explain needs neither the server nor the database, says auto, gated or refused with the
// rule, and exits 0 whatever the verdict.
func TestDeveloperExplain(t *testing.T) {
	t.Parallel()
	_, _, vars := env(t, "DATABASE_URL=postgres://nobody@127.0.0.1:1/none")
	ws := t.TempDir()
	if err := os.Symlink("/etc", filepath.Join(ws, "etc")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args    []string
		verdict string
		flag    string
	}{
		{[]string{"--", "go test ./..."}, "auto", ""},
		{[]string{"--", "make", "-C", "/tmp"}, "gated", "-C"},
		{[]string{"--", "grep -f /etc/passwd x"}, "gated", "-f"},
		{[]string{"--mode", "ask", "--", "go test ./..."}, "gated", ""},
		{[]string{"--cwd", "../..", "--", "ls"}, "refused", ""},
		{[]string{"--", "echo x >>~/.zshenv"}, "gated", ""},
		// As the run tool does: a path through a link in the workspace is refused.
		{[]string{"--mode", "run", "--", "head -n 1 etc/shadow"}, "refused", ""},
	}
	for _, tt := range tests {
		args := append([]string{"developer", "explain", "--workspace", ws, "--json"}, tt.args...)
		code, out, errOut := runBuddi(t, vars, time.Minute, args...)
		var got explainJSON
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
			t.Errorf("%v: exit %d\n%s%s", tt.args, code, out, errOut)
			continue
		}
		if got.Verdict != tt.verdict || got.Reason == "" || (tt.flag != "" && got.Flag != tt.flag) {
			t.Errorf("%v: %+v, want %s (flag %q)", tt.args, got, tt.verdict, tt.flag)
		}
	}
	if code, _, _ := runBuddi(t, vars, time.Minute, "developer", "explain", "--workspace", ws); code != 2 {
		t.Errorf("no command: exit %d, want 2", code)
	}
}

func TestDeveloperOwnerCommands(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	home, _, vars := env(t, "DATABASE_URL="+dsn)
	mkdir(t, home)
	if code, _, errOut := runBuddi(t, vars, time.Minute, "developer", "mode"); code != 3 || !strings.Contains(errOut, "buddi db migrate") {
		t.Errorf("before the developer schema exists: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := runBuddi(t, vars, 2*time.Minute, "db", "migrate"); code != 0 {
		t.Fatalf("db migrate: %s", errOut)
	}
	ws := t.TempDir()
	if code, _, errOut := runBuddi(t, vars, time.Minute, "developer", "workspace", "set", "--agent", "@dev", home); code != 1 {
		t.Errorf("workspace at the data directory: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "developer", "workspace", "set", "--agent", "@dev", ws); code != 0 || !strings.Contains(out, ws) {
		t.Fatalf("workspace set: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ := runBuddi(t, vars, time.Minute, "developer", "workspace", "show", "--json")
	var shown struct {
		Agent     string
		Workspace struct{ Directory string }
		Mode      string
	}
	if code != 0 || json.Unmarshal([]byte(out), &shown) != nil || shown.Agent != "developer" || shown.Mode != "run" {
		t.Errorf("workspace show --json: exit %d\n%s", code, out)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "developer", "mode", "edit"); code != 0 || !strings.Contains(out, "@dev is in edit mode") {
		t.Errorf("mode edit: exit %d\n%s", code, out)
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "developer", "mode", "--agent", "dev", "--json")
	var mode map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &mode) != nil || mode["agent"] != "developer" || mode["agent_handle"] != "@dev" || mode["mode"] != "edit" || mode["refused"] != "" {
		t.Errorf("mode --json: exit %d\n%s", code, out)
	}
	// explain without --workspace uses the record: edit mode asks before every command.
	code, out, _ = runBuddi(t, vars, time.Minute, "developer", "explain", "--json", "--", "go test ./...")
	var got explainJSON
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Verdict != "gated" || got.Dir != ws {
		t.Errorf("explain from the record: exit %d\n%s", code, out)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "developer", "allowed", "list"); code != 0 || !strings.Contains(out, "no commands allowed") {
		t.Errorf("allowed list: exit %d\n%s", code, out)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "developer", "allowed", "forget", "99"); code != 1 || !strings.Contains(errOut, "allowed list") {
		t.Errorf("forget unknown: exit %d\n%s", code, errOut)
	}
	// Whoever can write the database raises the mode, allows a command and moves the
	// workspace: the commands say none of it counts, and what the owner does.
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, sql := range []string{
		`UPDATE developer.settings SET mode = 'run' WHERE agent = 'developer'`,
		`INSERT INTO developer.remembered_commands (agent, workspace, argv, prefix, created_at) VALUES ('developer', '` + ws + `', '["make"]', true, now())`,
	} {
		if _, err := conn.Exec(context.Background(), sql); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "developer", "mode"); code != 0 || !strings.Contains(out, "ask mode") || !strings.Contains(out, "set it again") {
		t.Errorf("mode with a forged one: exit %d\n%s", code, out)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "developer", "allowed", "list"); code != 0 || !strings.Contains(out, "NOT SEALED") {
		t.Errorf("allowed list with a forged one: exit %d\n%s", code, out)
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "developer", "explain", "--json", "--", "make deploy")
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Verdict != "gated" {
		t.Errorf("explain with a forged mode and command: exit %d\n%s", code, out)
	}
	if _, err := conn.Exec(context.Background(), `UPDATE developer.workspaces SET directory = '/' WHERE agent = 'developer'`); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "developer", "workspace", "show"); code != 0 || !strings.Contains(out, "has no workspace") || !strings.Contains(out, "workspace set") {
		t.Errorf("workspace show with a forged one: exit %d\n%s", code, out)
	}
}
