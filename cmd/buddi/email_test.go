package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"buddi/db"
	"buddi/internal/mailtest"
	"buddi/internal/pgtest"
)

// buddi db migrate makes the email schema; buddi email add keeps the app password in the vault and the entry's name in the database,
// refuses xoauth2 in one sentence; list shows the account; test logs in to a real Dovecot,
// and says in one sentence what failed with a wrong password.
func TestEmailAddListTest(t *testing.T) {
	t.Parallel()
	srv := mailtest.Start(t)
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	pool, err := db.Open(ctx, dsn, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	_, _, vars := env(t, "DATABASE_URL="+dsn, "BUDDI_VAULT_KEY=aGVsbG8taGVsbG8taGVsbG8taGVsbG8taGVsbG8tISE=")
	// buddi db migrate makes the email schema: the plugin is compiled in (app.Manifests).
	if code, out, errOut := runBuddi(t, vars, 2*time.Minute, "db", "migrate"); code != 0 {
		t.Fatalf("db migrate: exit %d\n%s%s", code, out, errOut)
	}
	args := []string{"email", "add", "home", "--address", "alice@example.org", "--username", mailtest.User,
		"--imap-host", srv.Host, "--imap-port", strconv.Itoa(srv.Port), "--imap-tls", "plain-loopback-only",
		"--smtp-host", "127.0.0.1", "--smtp-port", "25", "--smtp-tls", "plain-loopback-only"}

	if code, _, errOut := runWithInput(t, vars, "x\n", append(args, "--auth", "xoauth2")...); code != 2 || !strings.Contains(errOut, "xoauth2 is not supported") {
		t.Fatalf("add with xoauth2: exit %d\n%s", code, errOut)
	}
	code, out, errOut := runWithInput(t, vars, mailtest.Password+"\n", append(args, "--json")...)
	var added map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &added) != nil || added["password_secret"] != "EMAIL_HOME" || strings.Contains(out, mailtest.Password) {
		t.Fatalf("add --json: exit %d\n%s%s", code, out, errOut)
	}
	var stored int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM email.accounts WHERE password_secret = 'EMAIL_HOME'
		AND position($1 in concat_ws(' ', name, address, imap_host, username, password_secret)) = 0`, mailtest.Password).Scan(&stored); err != nil || stored != 1 {
		t.Fatalf("accounts rows naming the vault entry and not the password: %d, %v", stored, err)
	}
	if code, _, errOut := runWithInput(t, vars, "x\n", args...); code != 2 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("add twice: exit %d\n%s", code, errOut)
	}

	code, out, errOut = runBuddi(t, vars, time.Minute, "email", "list", "--json")
	var listed []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 1 || listed[0]["name"] != "home" || listed[0]["password_secret"] != "EMAIL_HOME" {
		t.Fatalf("list --json: exit %d\n%s%s", code, out, errOut)
	}

	code, out, errOut = runBuddi(t, vars, time.Minute, "email", "test", "home", "--json")
	var tested map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &tested) != nil || tested["ok"] != true || tested["imap"] != "ok" {
		t.Fatalf("test --json: exit %d\n%s%s\n%s", code, out, errOut, srv.Logs())
	}

	// A wrong password in the vault: one sentence naming the entry, exit 1.
	if code, _, errOut := runWithInput(t, vars, "wrong\n", "vault", "set", "EMAIL_HOME"); code != 0 {
		t.Fatalf("vault set: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runBuddi(t, vars, time.Minute, "email", "test", "home")
	if code != 1 || !strings.Contains(errOut, "refused") || !strings.Contains(errOut, "EMAIL_HOME") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Fatalf("test with a wrong password: exit %d\n%s", code, errOut)
	}

	// buddi doctor names each account: one never read yet waits for buddi serve; one whose
	// last read failed shows that sentence with what to do.
	doctorEmail := func() map[string]string {
		t.Helper()
		_, out, _ := runBuddi(t, vars, time.Minute, "doctor", "--json")
		var rep struct{ Checks []map[string]string }
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, out)
		}
		for _, c := range rep.Checks {
			if c["name"] == "email home" {
				return c
			}
		}
		t.Fatalf("doctor has no line for the account:\n%s", out)
		return nil
	}
	if c := doctorEmail(); c["status"] != "ok" || !strings.Contains(c["sentence"], "not read yet") {
		t.Fatalf("doctor on an account never read: %v", c)
	}
	if _, err := pool.Exec(ctx, `UPDATE email.accounts SET last_error = 'email: polling home failed: logging in to 127.0.0.1:1 as alice was refused', last_error_at = now()`); err != nil {
		t.Fatal(err)
	}
	if c := doctorEmail(); c["status"] != "warn" || !strings.Contains(c["sentence"], "logging in to 127.0.0.1:1 as alice was refused") || !strings.Contains(c["fix"], "buddi email test home") {
		t.Fatalf("doctor on an account whose last read failed: %v", c)
	}
}
