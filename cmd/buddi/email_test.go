package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"buddi/db"
	"buddi/internal/mailtest"
	"buddi/internal/pgtest"
)

// buddi db migrate makes the email schema; buddi email add keeps the app password in the vault and the entry's name in the database,
// refuses xoauth2 in one sentence; list shows the account; test logs in to a real Dovecot
// and checks SMTP: a closed SMTP port is one sentence and exit 1 while IMAP stays ok, a real
// Postfix is ok (when it can run here), and a wrong password is one sentence naming the
// vault entry.
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
	// The account's SMTP port is closed until a Postfix stands there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	args := []string{"email", "add", "home", "--address", "alice@example.org", "--username", mailtest.User,
		"--imap-host", srv.Host, "--imap-port", strconv.Itoa(srv.Port), "--imap-tls", "plain-loopback-only",
		"--smtp-host", "127.0.0.1", "--smtp-port", strconv.Itoa(closedPort), "--smtp-tls", "plain-loopback-only"}

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

	// IMAP logs in; SMTP at a closed port is the one sentence of what failed, and exit 1.
	imapOK := fmt.Sprintf("IMAP ok (%s@%s)", mailtest.User, srv.Addr())
	smtpUnreachable := "could not reach the SMTP server 127.0.0.1:" + strconv.Itoa(closedPort)
	code, out, errOut = runBuddi(t, vars, time.Minute, "email", "test", "home", "--json")
	var tested map[string]any
	if code != 1 || json.Unmarshal([]byte(out), &tested) != nil || tested["ok"] != false || tested["imap"] != "ok" ||
		!strings.Contains(fmt.Sprint(tested["smtp"]), smtpUnreachable) || strings.Contains(fmt.Sprint(tested["smtp"]), "\n") {
		t.Fatalf("test --json with SMTP at a closed port: exit %d\n%s%s\n%s", code, out, errOut, srv.Logs())
	}
	code, out, errOut = runBuddi(t, vars, time.Minute, "email", "test", "home")
	if code != 1 || strings.TrimSpace(out) != imapOK || !strings.Contains(errOut, smtpUnreachable) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Fatalf("test with SMTP at a closed port: exit %d\n%s%s", code, out, errOut)
	}

	// With the account's SMTP at a real Postfix (loopback, no AUTH offered: fine on loopback),
	// both are ok and nothing is sent. Postfix needs root; without it only this part skips.
	t.Run("postfix", func(t *testing.T) {
		smtp := srv.StartSMTP(t)
		// Pointed at it in the database, the account is refused (its seal no longer checks):
		// neither server is logged in to, and the list says so.
		if _, err := pool.Exec(ctx, `UPDATE email.accounts SET smtp_port = $1 WHERE name = 'home'`, smtp.Port); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runBuddi(t, vars, time.Minute, "email", "test", "home", "--json")
		var tested map[string]any
		const refused = "refused and its app password is not sent"
		if code != 1 || json.Unmarshal([]byte(out), &tested) != nil || !strings.Contains(fmt.Sprint(tested["imap"]), refused) ||
			!strings.Contains(fmt.Sprint(tested["smtp"]), refused) {
			t.Fatalf("test --json of an account changed in the database: exit %d\n%s%s", code, out, errOut)
		}
		code, out, errOut = runBuddi(t, vars, time.Minute, "email", "list", "--json")
		if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 1 || listed[0]["refused"] == nil ||
			!strings.Contains(fmt.Sprint(listed[0]["last_error"]), "buddi email add home") {
			t.Fatalf("list --json of an account changed in the database: exit %d\n%s%s", code, out, errOut)
		}
		// Added again by the owner with that port, it is sealed and used.
		readd := func(port int) {
			t.Helper()
			a := slices.Clone(args)
			a[slices.Index(a, "--smtp-port")+1] = strconv.Itoa(port)
			if code, out, errOut := runWithInput(t, vars, mailtest.Password+"\n", a...); code != 0 {
				t.Fatalf("add again: exit %d\n%s%s", code, out, errOut)
			}
		}
		readd(smtp.Port)
		t.Cleanup(func() {
			if _, err := pool.Exec(ctx, `UPDATE email.accounts SET smtp_port = $1 WHERE name = 'home'`, closedPort); err != nil {
				t.Error(err)
			}
			readd(closedPort)
		})
		code, out, errOut = runBuddi(t, vars, time.Minute, "email", "test", "home", "--json")
		tested = nil
		if code != 0 || json.Unmarshal([]byte(out), &tested) != nil || tested["ok"] != true || tested["imap"] != "ok" || tested["smtp"] != "ok" {
			t.Fatalf("test --json against Postfix: exit %d\n%s%s\n%s", code, out, errOut, smtp.Logs())
		}
		code, out, errOut = runBuddi(t, vars, time.Minute, "email", "test", "home")
		if want := imapOK + "\nSMTP ok (" + mailtest.User + "@" + smtp.Addr() + ")"; code != 0 || strings.TrimSpace(out) != want || errOut != "" {
			t.Fatalf("test against Postfix: exit %d\n%s%s\nwant:\n%s", code, out, errOut, want)
		}
		// Postfix logs each session's commands when it ends, a moment later: both tests said
		// EHLO and QUIT and nothing else.
		const session = "ehlo=1 quit=1 commands=2"
		var logs string
		waitFor(t, "Postfix's log of both sessions", 10*time.Second, func() bool { logs = smtp.Logs(); return strings.Count(logs, session) >= 2 })
		if strings.Count(logs, session) != 2 || strings.Contains(logs, " mail=") || strings.Contains(logs, "from=<") {
			t.Fatalf("Postfix's log does not show two sessions of EHLO and QUIT only:\n%s", logs)
		}
	})

	// A wrong password in the vault: one sentence naming the entry (SMTP, at the closed port
	// again, says its own), exit 1, the password in neither.
	const wrong = "not-this-app-password"
	if code, _, errOut := runWithInput(t, vars, wrong+"\n", "vault", "set", "EMAIL_HOME"); code != 0 {
		t.Fatalf("vault set: exit %d\n%s", code, errOut)
	}
	code, out, errOut = runBuddi(t, vars, time.Minute, "email", "test", "home")
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if code != 1 || out != "" || len(lines) != 2 || !strings.Contains(lines[0], "refused") || !strings.Contains(lines[0], "EMAIL_HOME") ||
		!strings.Contains(lines[1], smtpUnreachable) || strings.Contains(errOut, wrong) {
		t.Fatalf("test with a wrong password: exit %d\n%s%s", code, out, errOut)
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
