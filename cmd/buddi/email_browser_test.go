package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	pt "buddi/runtime/providertest"
)

// The Email page in a real browser over buddi serve. With no account it says, in one
// sentence each, how to add one and that nothing arrived or waits. Then, with what the email
// source and a triage run leave in the tables (written here with SQL): an account whose last
// read failed (the sentence holding a stored secret) is listed with the sentence, its
// redaction mark in place of the secret, and the command that checks the fix; an account read
// before says when; a message whose Subject is markup is drawn as text (no element made from
// it), its triage done, with a link that opens its run's conversation in the chat, not the
// agent's latest; one owed its triage says so; no draft waits, then a reply proposed is
// listed with a link to Home. At 1280 and 390 px, with the screenshots in the test's artifact
// directory.
func TestEmailPageInBrowser(t *testing.T) {
	// An hour between polls: the source reads once at start, and the test waits for that read
	// to end before the accounts below exist, so the made-up accounts keep the outcomes
	// written for them.
	_, s, vars, _ := scriptedServeWith(t, []string{"BUDDI_EMAIL_PERIOD=1h"}, nil)
	p := openPage(t, s)
	p.signIn(vars)
	p.width(1280)
	p.goTo("#/email")
	p.poll("the empty Email page", `!!document.querySelector('header nav a.active[data-page=email]') && !!document.querySelector('main .card.empty')`)
	if got := p.eval(`document.querySelector('main').innerText`); !strings.Contains(got, "No email account yet: add one with buddi email add.") ||
		!strings.Contains(got, "No draft is waiting for your approval.") || !strings.Contains(got, "No mail yet") {
		t.Fatalf("the empty page says:\n%s", got)
	}
	p.shootBoth("email-empty")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn := dbConn(t, s.home)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	one := func(sql string, dest any, args ...any) {
		t.Helper()
		if err := conn.QueryRow(ctx, sql, args...).Scan(dest); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	// The source's first read (at start, with no account) is over before the accounts exist.
	waitFor(t, "the email source's first read", time.Minute, func() bool {
		var n int
		return conn.QueryRow(ctx, `SELECT count(*) FROM core.source_runs WHERE source = 'email.inbox' AND state <> 'running'`).Scan(&n) == nil && n > 0
	})
	var work, mailbox, hostile, owed int64
	one(`INSERT INTO email.accounts (name, address, imap_host, imap_port, imap_tls, smtp_host, smtp_port, smtp_tls, username, password_secret,
			last_error, last_error_at)
		VALUES ('work', 'me@work.example', 'imap.work.example', 993, 'tls', 'smtp.work.example', 465, 'tls', 'me', 'EMAIL_WORK',
			$1, now()) RETURNING id`, &work, "the server said [AUTHENTICATIONFAILED] the password "+pt.APIKey+" is not accepted")
	exec(`INSERT INTO email.accounts (name, address, imap_host, imap_port, imap_tls, smtp_host, smtp_port, smtp_tls, username, password_secret, last_sync)
		VALUES ('home', 'me@home.example', 'imap.home.example', 993, 'tls', 'smtp.home.example', 465, 'tls', 'me', 'EMAIL_HOME', now())`)
	one(`INSERT INTO email.mailboxes (account_id, name, uidvalidity, last_uid) VALUES ($1, 'INBOX', 7, 2) RETURNING id`, &mailbox, work)
	message := func(uid int, from, subject string) int64 {
		var id int64
		one(`INSERT INTO email.messages (account_id, mailbox_id, uidvalidity, uid, from_addr, subject) VALUES ($1, $2, 7, $3, $4, $5) RETURNING id`,
			&id, work, mailbox, uid, from, subject)
		exec(`INSERT INTO email.triage (message, account_id) VALUES ($1, $2)`, id, work)
		return id
	}
	hostile = message(1, "Mallory <m@evil.example>", "<img src=x onerror=alert(1)>")
	owed = message(2, "Alice <alice@example.com>", "Lunch on Friday?")
	// The hostile message's triage ran and ended, in a conversation of its own; the agent's
	// conversation with the owner is a later one.
	var conv, run string
	one(`INSERT INTO core.conversations (agent, surface) VALUES ('developer', 'mission') RETURNING id::text`, &conv)
	one(`SELECT gen_random_uuid()::text`, &run)
	exec(`INSERT INTO core.messages (conversation_id, kind, body) VALUES ($1, 'user', jsonb_build_object('text', 'A message arrived in the email account work.'))`, conv)
	exec(`INSERT INTO core.source_enqueues (source, dedup_key, agent, run_id) VALUES ('email.inbox', $1, 'role:mail', $2)`, fmt.Sprintf("message:%d", hostile), run)
	exec(`UPDATE email.triage SET state = 'enqueued', enqueued_at = now() WHERE message = $1`, hostile)
	exec(`INSERT INTO core.events (kind, conversation_id, payload) VALUES ('run.started', $1::uuid, jsonb_build_object('run_id', $2::text, 'conversation_id', $3::text, 'agent', 'developer'))`, conv, run, conv)
	exec(`INSERT INTO core.events (kind, conversation_id, payload) VALUES ('run.finished', $1, jsonb_build_object('run_id', $2::text, 'next_run', ''))`, conv, run)
	var later string
	one(`INSERT INTO core.conversations (agent, surface) VALUES ('developer', 'dashboard') RETURNING id::text`, &later)
	exec(`INSERT INTO core.messages (conversation_id, kind, body) VALUES ($1, 'user', jsonb_build_object('text', 'Something else entirely.'))`, later)

	p.goTo("#/home")
	p.goTo("#/email")
	p.poll("the accounts and the triage", `document.querySelectorAll('main [data-account]').length === 2 && document.querySelectorAll('main [data-message]').length === 2`)
	failing := p.eval(`document.querySelector('main [data-account=work]').innerText`)
	if !strings.Contains(failing, "the server said [AUTHENTICATIONFAILED] the password ‹secret:MODEL_KEY› is not accepted") ||
		!strings.Contains(failing, "Fix what it names, then check with buddi email test work.") || !strings.Contains(failing, "Never read yet") {
		t.Errorf("the failing account's card says:\n%s", failing)
	}
	if p.eval(`getComputedStyle(document.querySelector('main [data-account=work] .last-error')).borderLeftColor`) != "rgb(192, 57, 43)" {
		t.Error("the last error is not drawn in the warning style")
	}
	if got := p.eval(`document.querySelector('main [data-account=home]').innerText`); !strings.Contains(got, "Last read ") || strings.Contains(got, "Fix") {
		t.Errorf("the account read before says:\n%s", got)
	}
	row := fmt.Sprintf(`main [data-message="%d"]`, hostile)
	if got := p.eval(`document.querySelector('` + row + ` .subject').textContent`); got != "<img src=x onerror=alert(1)>" {
		t.Errorf("the hostile subject is drawn as %q", got)
	}
	if n := p.eval(`String(document.querySelectorAll('main img').length)`); n != "0" {
		t.Errorf("the page made %s img elements out of a subject", n)
	}
	if got := p.eval(`document.querySelector('` + row + `').innerText`); !strings.Contains(got, "Mallory <m@evil.example>") || !strings.Contains(got, "triaged") ||
		!strings.Contains(got, "Open the triage with @dev") {
		t.Errorf("the triaged message's row says:\n%s", got)
	}
	if got := p.eval(fmt.Sprintf(`document.querySelector('main [data-message="%d"]').innerText`, owed)); !strings.Contains(got, "waiting for its triage to start") || strings.Contains(got, "Open the triage") {
		t.Errorf("the message owed its triage says:\n%s", got)
	}
	if first := p.eval(`document.querySelector('main [data-message]').dataset.message`); first != fmt.Sprint(owed) {
		t.Errorf("the first row is message %s, want the newest, %d", first, owed)
	}
	if got := p.eval(`document.querySelector('main').innerText`); !strings.Contains(got, "No draft is waiting for your approval.") || strings.Contains(got, pt.APIKey) {
		t.Errorf("the page says:\n%s", got)
	}
	if strings.Contains(p.eval(`document.documentElement.outerHTML`), pt.APIKey) {
		t.Error("the page holds a stored secret")
	}
	p.shootBoth("email")

	// A reply an agent proposed waits for approval: listed with its summary, as text, and a
	// link to Home, where its card is decided.
	var draft string
	one(`INSERT INTO core.actions (tool, tool_version, agent, args, envelope, policy_version, hash, expires_at)
		VALUES ('email.reply', '0.1.0', 'developer', '{}', jsonb_build_object('summary', $1::text), 3, 'h', now() + interval '1 day')
		RETURNING id::text`, &draft, "Send “Re: <b>Lunch</b>” from me@work.example to 1 recipient")
	exec(`INSERT INTO core.approvals (action_id) VALUES ($1)`, draft)
	p.goTo("#/home")
	p.goTo("#/email")
	card := fmt.Sprintf(`main [data-approval="%s"]`, draft)
	p.poll("the draft", `!!document.querySelector('`+card+`')`)
	if got := p.eval(`document.querySelector('` + card + `').innerText`); !strings.Contains(got, "Send “Re: <b>Lunch</b>” from me@work.example to 1 recipient") ||
		!strings.Contains(got, "email.reply") || !strings.Contains(got, "@dev") || p.eval(`document.querySelector('`+card+` a.decide').getAttribute('href')`) != "#/home" {
		t.Errorf("the draft's card says:\n%s", got)
	}
	if n := p.eval(`String(document.querySelectorAll('main b').length)`); n != "0" {
		t.Errorf("the page made %s b elements out of a summary", n)
	}
	p.shootBoth("email-draft")

	// The link opens the triage's own conversation, not the agent's latest.
	p.click(row + ` a.open-chat`)
	p.poll("the triage's conversation", `location.hash === '#/chat/developer' && !!document.querySelector('#thread') && document.querySelector('#thread').innerText.includes('A message arrived in the email account work.')`)
}
