package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"buddi/internal/pgtest"
)

// buddi agents mode shows and sets an agent's mode; agents list and show carry it.
func TestAgentsModeCommand(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	home, _, vars := env(t, "DATABASE_URL="+dsn)
	mkdir(t, home)
	if code, _, errOut := runBuddi(t, vars, 2*time.Minute, "db", "migrate"); code != 0 {
		t.Fatalf("db migrate: %s", errOut)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "mode", "@dev"); code != 0 || !strings.Contains(out, "auto mode; the default") {
		t.Fatalf("agents mode @dev before any is set: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "mode", "@dev", "plan"); code != 0 || !strings.Contains(out, "plan mode; it applies to the next call") {
		t.Fatalf("agents mode @dev plan: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "mode", "@dev", "--json")
	var got struct {
		Agent     string `json:"agent"`
		Mode      string `json:"mode"`
		Set       bool   `json:"set"`
		UpdatedBy string `json:"updated_by"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Agent != "developer" || got.Mode != "plan" || !got.Set || got.UpdatedBy != "owner:terminal" {
		t.Fatalf("agents mode --json: exit %d %+v\n%s%s", code, got, out, errOut)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "mode", "@dev", "root"); code != 2 || !strings.Contains(errOut, `"plan","accept-edits","auto"`) {
		t.Errorf("an unknown mode: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "mode", "@nobody", "plan"); code != 1 || !strings.Contains(errOut, "buddi agents list") {
		t.Errorf("an unknown agent: exit %d\n%s%s", code, out, errOut)
	}

	code, out, errOut = runBuddi(t, vars, time.Minute, "agents", "list")
	if code != 0 || !strings.Contains(out, "MODE") {
		t.Fatalf("agents list: exit %d\n%s%s", code, out, errOut)
	}
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasPrefix(fields[0], "@") || strings.HasSuffix(fields[0], ":") {
			continue
		}
		want := "auto"
		if fields[0] == "@dev" {
			want = "plan"
		}
		if !strings.Contains(" "+line+" ", " "+want+" ") {
			t.Errorf("agents list: %q does not show %s", line, want)
		}
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "agents", "show", "@dev"); code != 0 || !strings.Contains(out, "mode:   plan") {
		t.Errorf("agents show @dev: exit %d\n%s", code, out)
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "agents", "list", "--json")
	var list []struct{ Handle, Mode string }
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil {
		t.Fatalf("agents list --json: exit %d\n%s", code, out)
	}
	for _, a := range list {
		if a.Handle == "@dev" && a.Mode != "plan" {
			t.Errorf("agents list --json: @dev's mode %q, want plan", a.Mode)
		}
	}
}
