package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"buddi/core/executor"
	"buddi/core/permission"
	"buddi/core/registry"
	"buddi/core/seal"
	"buddi/internal/pgtest"
	"buddi/migrations"
	"buddi/plugins"
	"buddi/plugins/developer"
	"buddi/plugins/developer/runlist"
	"buddi/queue"
	"buddi/runtime/run"
)

// The developer's own modes (ask, edit, run) and the agent's mode (plan, accept-edits, auto)
// compose: a call is treated as the stricter of the two says. So plan refuses every developer
// write and command, accept-edits lowers run to edit (a pinned command asks; an edit inside
// the workspace does not), and auto leaves the developer's mode to decide (ask gates writes).
func TestDeveloperModesUnderAgentModes(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	home, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	key, _ := seal.New(bytes.Repeat([]byte{7}, 32))
	m := developer.Manifest(developer.Deps{Pool: pool, DataDir: home, Seal: key})
	ctx := context.Background()
	if _, err := migrations.Up(ctx, pool, nil, migrations.Set{Schema: m.Schema, FS: m.Migrations}); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(m)
	if err != nil {
		t.Fatal(err)
	}
	devs := developer.NewStore(pool, key, nil)
	if _, err := devs.SetWorkspace(ctx, "dev", ws, "owner:terminal", os.Getenv("PATH")); err != nil {
		t.Fatal(err)
	}
	insert, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	exec := executor.New(pool, reg, run.JobQueue{Inserter: insert}, nil)
	exec.Seal = key
	modes := executor.NewModes(pool, key)
	exec.Policy = ownerPolicy(home, devs, modes)

	var conv string
	if err := pool.QueryRow(ctx, `INSERT INTO core.conversations (agent, surface) VALUES ('dev', 'dashboard') RETURNING id`).Scan(&conv); err != nil {
		t.Fatal(err)
	}
	n := 0
	propose := func(tool string, args any) executor.Proposed {
		t.Helper()
		raw, _ := json.Marshal(args)
		n++
		p, err := exec.Propose(ctx, plugins.Call{Tool: tool, Args: raw, Agent: "dev", ConversationID: conv, RunID: "run-dev", CallID: string(rune('a' + n)),
			Granted: true, Surface: "dashboard", Owner: &plugins.OwnerRequest{Surface: "dashboard", ExpiresAt: time.Now().Add(time.Hour)}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	write := func() executor.Proposed {
		return propose("developer.write", map[string]string{"path": "a.txt", "content": "beta\n"})
	}
	ls := func() executor.Proposed { return propose("developer.run", map[string]string{"command": "ls"}) }
	set := func(agent permission.Mode, dev runlist.Mode) {
		t.Helper()
		if _, err := modes.SetMode(ctx, "dev", agent, "owner:terminal"); err != nil {
			t.Fatal(err)
		}
		if err := devs.SetMode(ctx, "dev", dev); err != nil {
			t.Fatal(err)
		}
	}

	set(permission.ModeAuto, runlist.ModeRun)
	if p := ls(); !ran(p) {
		t.Errorf("auto, run: a pinned command: %+v, want it run", p)
	}
	if p := write(); !ran(p) {
		t.Errorf("auto, run: a write inside the workspace: %+v, want it run", p)
	}

	set(permission.ModeAcceptEdits, runlist.ModeRun)
	if p := ls(); !gated(p) {
		t.Errorf("accept-edits, run: a pinned command: %+v, want a card (accept-edits is the developer's edit)", p)
	}
	if p := write(); !ran(p) {
		t.Errorf("accept-edits, run: a write inside the workspace: %+v, want it run", p)
	}

	set(permission.ModePlan, runlist.ModeRun)
	if p := ls(); p.Refusal == "" {
		t.Errorf("plan, run: a pinned command: %+v, want a refusal", p)
	}
	if p := write(); p.Refusal == "" {
		t.Errorf("plan, run: a write: %+v, want a refusal", p)
	}
	if p := propose("developer.read", map[string]string{"path": "a.txt"}); !ran(p) {
		t.Errorf("plan: a read: %+v, want it run", p)
	}

	set(permission.ModeAuto, runlist.ModeAsk)
	if p := write(); !gated(p) {
		t.Errorf("auto, ask: a write: %+v, want a card", p)
	}
}
