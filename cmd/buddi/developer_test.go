package main

import (
	"encoding/json"
	"testing"
	"time"
)

// explain needs neither the server nor the database, says auto, gated or refused with the
// rule, and exits 0 whatever the verdict.
func TestDeveloperExplain(t *testing.T) {
	t.Parallel()
	_, _, vars := env(t, "DATABASE_URL=postgres://nobody@127.0.0.1:1/none")
	ws := t.TempDir()
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
