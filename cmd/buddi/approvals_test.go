package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/action"
	"buddi/core/seal"
	"buddi/db"
	"buddi/internal/pgtest"
	"buddi/plugins"
)

func TestApprovalsCommands(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	pool, err := db.Open(ctx, dsn, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	home, _, vars := env(t, "DATABASE_URL="+dsn)
	mkdir(t, home)
	key, err := seal.Load(home) // the key the command line seals its decision with
	if err != nil {
		t.Fatal(err)
	}
	var rec action.Record
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		rec, err = action.Create(ctx, tx, key, action.Proposal{
			Call:    plugins.Call{Tool: "mail.send", Args: json.RawMessage(`{"to":"ann@example.com"}`), Agent: "concierge"},
			Version: "1.0.0",
			Envelope: plugins.Envelope{Summary: "Send mail to ann@example.com", Preview: "To: ann@example.com\n\nhello",
				Choices: []plugins.Choice{{Name: "from", Options: []string{"me@example.com", "alias@example.com"}}}},
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runBuddi(t, vars, time.Minute, "approvals", "list", "--json")
	var list []action.Record
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0].ID != rec.ID {
		t.Fatalf("list --json: exit %d\n%s%s", code, out, errOut)
	}
	// The agent that asked is named by its handle beside its id in JSON, by its handle in text.
	var named []map[string]any
	if json.Unmarshal([]byte(out), &named) != nil || len(named) != 1 || named[0]["agent"] != "concierge" || named[0]["agent_handle"] != "@buddi" {
		t.Errorf("list --json names the agent: %s", out)
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "approvals", "list")
	if code != 0 || !strings.Contains(out, " @buddi ") || strings.Contains(out, "concierge") {
		t.Errorf("list names the agent by its handle: exit %d\n%s", code, out)
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "approvals", "show", rec.ID)
	if code != 0 || !strings.Contains(out, "To: ann@example.com") || !strings.Contains(out, "choose from: me@example.com | alias@example.com") ||
		!strings.Contains(out, "asked by @buddi") {
		t.Errorf("show: exit %d\n%s", code, out)
	}
	code, _, errOut = runBuddi(t, vars, time.Minute, "approvals", "approve", rec.ID, "--pick", "from=evil@example.com")
	if code != 1 || !strings.Contains(errOut, "not an option") {
		t.Errorf("approve with a bad pick: exit %d\n%s", code, errOut)
	}
	code, out, errOut = runBuddi(t, vars, time.Minute, "approvals", "approve", rec.ID, "--pick", "from=alias@example.com")
	if code != 0 || !strings.Contains(out, "approved") {
		t.Fatalf("approve: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = runBuddi(t, vars, time.Minute, "approvals", "reject", rec.ID)
	if code != 1 || !strings.Contains(errOut, "already decided on terminal: it is approved") {
		t.Errorf("late reject: exit %d\n%s", code, errOut)
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "approvals", "list")
	if code != 0 || !strings.Contains(out, "nothing waits for you") {
		t.Errorf("list after deciding: exit %d\n%s", code, out)
	}
	code, _, errOut = runBuddi(t, vars, time.Minute, "approvals", "show", "00000000-0000-4000-8000-000000000000")
	if code != 1 || !strings.Contains(errOut, "not found") {
		t.Errorf("show unknown: exit %d\n%s", code, errOut)
	}
	var jobs int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM river.river_job WHERE kind = 'action.execute'`).Scan(&jobs); err != nil || jobs != 1 {
		t.Errorf("execution jobs = %d, %v; want 1 waiting for buddi serve", jobs, err)
	}
}

func TestPermissionsCommands(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	pool, err := db.Open(ctx, dsn, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	home, _, vars := env(t, "DATABASE_URL="+dsn)
	mkdir(t, home)
	key, err := seal.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	var granted action.Standing
	var pending action.Record
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if granted, err = action.Grant(ctx, tx, key, plugins.Spec{Name: "dev.test", ReusableApproval: true}, "1", "dev", "", "dashboard"); err != nil {
			return err
		}
		pending, err = action.Create(ctx, tx, key, action.Proposal{Call: plugins.Call{Tool: "mail.send", Args: json.RawMessage(`{}`), Agent: "concierge"}, Version: "1"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	code, out, _ := runBuddi(t, vars, time.Minute, "permissions", "list", "--json")
	var list []action.Standing
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0].ID != granted.ID {
		t.Fatalf("permissions list --json: exit %d\n%s", code, out)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "permissions", "revoke", strconv.FormatInt(granted.ID, 10), "--json"); code != 0 ||
		!strings.Contains(out, `"ok": true`) || !strings.Contains(out, `"id": `+strconv.FormatInt(granted.ID, 10)) {
		t.Errorf("revoke --json: exit %d\n%s", code, out)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "permissions", "revoke", strconv.FormatInt(granted.ID, 10)); code != 1 || !strings.Contains(errOut, "buddi permissions list") {
		t.Errorf("second revoke: exit %d\n%s", code, errOut)
	}
	// A tool that did not opt in cannot be remembered; the approval is not taken either.
	code, _, errOut := runBuddi(t, vars, time.Minute, "approvals", "approve", pending.ID, "--remember", "all")
	if code != 1 || !strings.Contains(errOut, "standing permission") {
		t.Errorf("approve --remember for a tool that did not opt in: exit %d\n%s", code, errOut)
	}
	if rec, _ := action.Get(ctx, pool, pending.ID); rec.Approval.State != action.Pending {
		t.Errorf("a refused remember still decided the action: %s", rec.Approval.State)
	}
}
