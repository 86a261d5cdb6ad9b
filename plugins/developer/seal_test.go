package developer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"buddi/plugins"
	"buddi/plugins/developer/runlist"
)

// The records below are written straight into the developer schema, as whoever can write the
// database would (its administrators, the postgres account, anything holding the role's
// password); none of them lets a command run without a card. The same records written
// through buddi's own path do.

// exec runs sql on the bundle's database, as the database's administrator would.
func (b *testBundle) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := b.deps.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// forged counts developer.forged events.
func (b *testBundle) forged(t *testing.T) int {
	t.Helper()
	var n int
	if err := b.deps.Pool.QueryRow(context.Background(), `SELECT count(*) FROM core.events WHERE kind = 'developer.forged'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestForgedModeStillGetsACard(t *testing.T) {
	b := setup(t)
	echo := call("run", args(t, map[string]any{"command": "echo hello"}))
	b.setMode(t, runlist.ModeAsk)
	if got := b.tier(t, echo); got != plugins.TierGated {
		t.Fatalf("ask mode: %s, want gated", got)
	}
	// Raised to run in the table.
	b.exec(t, `UPDATE developer.settings SET mode = 'run' WHERE agent = $1`, agent)
	if got := b.tier(t, echo); got != plugins.TierGated {
		t.Errorf("a forged run mode: %s, want gated", got)
	}
	if b.forged(t) == 0 {
		t.Error("no developer.forged event for the forged mode")
	}
	// Removed from the table: an agent with a workspace has a mode on record, so a missing
	// one is the strictest, not the default.
	b.exec(t, `DELETE FROM developer.settings WHERE agent = $1`, agent)
	if got := b.tier(t, echo); got != plugins.TierGated {
		t.Errorf("a removed mode: %s, want gated", got)
	}
	// The owner's own path.
	b.setMode(t, runlist.ModeRun)
	if got := b.tier(t, echo); got != plugins.TierAuto {
		t.Errorf("run mode set by the owner: %s, want auto", got)
	}
}

func TestForgedRememberedCommandStillGetsACard(t *testing.T) {
	b := setup(t)
	install := call("run", args(t, map[string]any{"command": "npm install"}))
	if got := b.tier(t, install); got != plugins.TierGated {
		t.Fatalf("npm install: %s, want gated", got)
	}
	b.exec(t, `INSERT INTO developer.remembered_commands (agent, workspace, argv, prefix, created_at) VALUES ($1, $2, '["npm"]', true, now())`, agent, b.ws)
	if got := b.tier(t, install); got != plugins.TierGated {
		t.Errorf("a forged remembered command: %s, want gated", got)
	}
	if b.forged(t) == 0 {
		t.Error("no developer.forged event for the forged remembered command")
	}
	// A seal of buddi's own, its row turned into another command, checks nothing.
	if _, err := b.store.Remember(context.Background(), runlist.Remembered{Agent: agent, Workspace: b.ws, Argv: []string{"npm", "ci"}}); err != nil {
		t.Fatal(err)
	}
	b.exec(t, `UPDATE developer.remembered_commands SET argv = '["npm", "install"]' WHERE argv = '["npm", "ci"]'`)
	if got := b.tier(t, install); got != plugins.TierGated {
		t.Errorf("a remembered command changed in the table: %s, want gated", got)
	}
	b.exec(t, `DELETE FROM developer.remembered_commands WHERE argv = '["npm", "install"]'`)
	// The owner's own path.
	if _, err := b.store.Remember(context.Background(), runlist.Remembered{Agent: agent, Workspace: b.ws, Argv: []string{"npm", "install"}}); err != nil {
		t.Fatal(err)
	}
	if got := b.tier(t, install); got != plugins.TierAuto {
		t.Errorf("npm install remembered by the owner: %s, want auto", got)
	}
}

func TestForgedWorkspaceIsNoWorkspace(t *testing.T) {
	b := setup(t)
	// The workspace moved outside, in the table.
	b.exec(t, `UPDATE developer.workspaces SET directory = $2 WHERE agent = $1`, agent, b.outside)
	read := call("read", args(t, map[string]any{"path": "secret.txt"}))
	if out := b.run(t, read, nil); !out.Result.IsError || strings.Contains(out.Result.Text, "needle secret") {
		t.Errorf("a forged workspace was read: %q", out.Result.Text)
	}
	if b.forged(t) == 0 {
		t.Error("no developer.forged event for the forged workspace")
	}
	// The PATH commands resolve on, pointed at a program of the forger's, in the table.
	b.setWorkspace(t, agent, b.ws)
	evil := filepath.Join(b.base, "evil")
	writeFile(t, filepath.Join(evil, "echo"), "#!/bin/sh\nprintf 'the forger ran'\n")
	if err := os.Chmod(filepath.Join(evil, "echo"), 0o755); err != nil {
		t.Fatal(err)
	}
	b.exec(t, `UPDATE developer.workspaces SET path = $2 WHERE agent = $1`, agent, evil)
	echo := call("run", args(t, map[string]any{"command": "echo hello"}))
	if out := b.run(t, echo, nil); strings.Contains(out.Result.Text, "the forger ran") {
		t.Errorf("a forged PATH ran the forger's program: %q", out.Result.Text)
	}
	// The owner's own path.
	b.setWorkspace(t, agent, b.ws)
	if out := b.mustRun(t, call("read", args(t, map[string]any{"path": "a.txt"})), nil); !strings.Contains(out, "alpha") {
		t.Errorf("the workspace the owner set: %q", out)
	}
}

func TestForgedTailnetSwitchIsOff(t *testing.T) {
	b := setup(t)
	b.exec(t, `INSERT INTO developer.tailnet (id, previews, updated_at) VALUES (true, true, now())`)
	if on, err := b.store.TailnetPreviews(context.Background()); err != nil || on {
		t.Errorf("a forged tailnet switch: %v %v, want off", on, err)
	}
	if err := b.store.SetTailnetPreviews(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if on, err := b.store.TailnetPreviews(context.Background()); err != nil || !on {
		t.Errorf("the switch the owner turned on: %v %v", on, err)
	}
}

// A process row written into the table names the log developer.output reads back to the
// model: the owner's files must not be read through it.
func TestForgedProcessLogIsNotRead(t *testing.T) {
	b := setup(t)
	b.exec(t, `INSERT INTO developer.processes (agent, name, pid, start_time, argv, cwd, log_path, started_at)
		VALUES ($1, 'web', 1, 1, '["sleep"]', $2, $3, now())`, agent, b.ws, filepath.Join(b.outside, "secret.txt"))
	out := b.run(t, call("output", args(t, map[string]any{"name": "web"})), nil)
	if strings.Contains(out.Result.Text, "needle secret") {
		t.Errorf("a forged process row read the owner's file: %q", out.Result.Text)
	}
	if b.forged(t) == 0 {
		t.Error("no developer.forged event for the forged process row")
	}
}
