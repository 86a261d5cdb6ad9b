package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/redact"
	"buddi/internal/pgtest"
	"buddi/migrations"
	"buddi/plugins/email"
	"buddi/surfaces/dashboard"
)

// vaultValues is a redaction source over fixed secrets.
type vaultValues map[string]string

func (v vaultValues) Values() (map[string]string, error) { return v, nil }

// mailFixture writes what the email source and the runs leave behind, straight into the
// tables: an account, a mailbox, and messages with their triage rows.
type mailFixture struct {
	t       *testing.T
	pool    *pgxpool.Pool
	account int64
	mailbox int64
	uid     int
}

func newMailFixture(t *testing.T) *mailFixture {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := migrations.Up(ctx, pool, nil, migrations.Set{Schema: email.Schema, FS: email.Migrations()}); err != nil {
		t.Fatal(err)
	}
	f := &mailFixture{t: t, pool: pool}
	f.exec(`INSERT INTO email.accounts (name, address, imap_host, imap_port, imap_tls, smtp_host, smtp_port, smtp_tls, username, password_secret)
		VALUES ('work', 'me@example.com', 'imap.example.com', 993, 'tls', 'smtp.example.com', 465, 'tls', 'me', 'EMAIL_WORK')`)
	f.row(`SELECT id FROM email.accounts WHERE name = 'work'`, &f.account)
	f.row(`INSERT INTO email.mailboxes (account_id, name, uidvalidity, last_uid) VALUES ($1, 'INBOX', 1, 0) RETURNING id`, &f.mailbox, f.account)
	return f
}

func (f *mailFixture) exec(sql string, args ...any) {
	f.t.Helper()
	if _, err := f.pool.Exec(context.Background(), sql, args...); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

func (f *mailFixture) row(sql string, dest any, args ...any) {
	f.t.Helper()
	if err := f.pool.QueryRow(context.Background(), sql, args...).Scan(dest); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

// message records a message owed its triage and returns its id.
func (f *mailFixture) message(from, subject string) int64 {
	f.t.Helper()
	f.uid++
	var id int64
	f.row(`INSERT INTO email.messages (account_id, mailbox_id, uidvalidity, uid, from_addr, subject) VALUES ($1, $2, 1, $3, $4, $5) RETURNING id`,
		&id, f.account, f.mailbox, f.uid, from, subject)
	f.exec(`INSERT INTO email.triage (message, account_id) VALUES ($1, $2)`, id, f.account)
	return id
}

// enqueue starts message's triage run as the source does: a conversation of its own whose
// active run is the run, the dedup row, and the triage row marked enqueued.
func (f *mailFixture) enqueue(message int64, agent string) (conv, runID string) {
	f.t.Helper()
	f.row(`INSERT INTO core.conversations (agent, surface, active_run) VALUES ($1, 'mission', gen_random_uuid()) RETURNING id::text`, &conv, agent)
	f.row(`SELECT active_run::text FROM core.conversations WHERE id = $1`, &runID, conv)
	f.exec(`INSERT INTO core.source_enqueues (source, dedup_key, agent, run_id) VALUES ($1, $2, 'role:mail', $3)`,
		email.SourceID, fmt.Sprintf("message:%d", message), runID)
	f.exec(`UPDATE email.triage SET state = 'enqueued', enqueued_at = now() WHERE message = $1`, message)
	return conv, runID
}

// recorded fails the test when an event could not be recorded.
func (f *mailFixture) recorded(_ eventlog.Event, err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// The Email page's reads over the real schemas: each message's triage state follows its
// run's latest event (owed, queued, started, waiting on an approval, retrying, failed, done),
// with the run's conversation and agent; the newest message first, at most the limit; the
// stranger's From and Subject on one line with MIME words decoded, line breaks and the
// controls that reorder text taken out, and stored secrets scrubbed; an account's last error
// scrubbed and no password among its fields; drafts are the pending approvals of email.send
// and email.reply only.
func TestEmailPageReads(t *testing.T) {
	ctx := context.Background()
	f := newMailFixture(t)
	const secret = "sk-live-0123456789abcdef"
	scrub := redact.NewLive(vaultValues{"MODEL_KEY": secret})
	if err := scrub.Reload(); err != nil {
		t.Fatal(err)
	}
	page := emailPage{pool: f.pool, scrub: scrub}

	owed := f.message("a@example.com", "owed")
	queued := f.message("b@example.com", "queued")
	started := f.message("c@example.com", "started")
	waiting := f.message("d@example.com", "waiting")
	retrying := f.message("e@example.com", "retrying")
	failed := f.message("f@example.com", "failed")
	done := f.message("\"Mallory\u202e\" <m@evil.example>", "=?utf-8?q?Caf=C3=A9?= <img src=x onerror=alert(1)>\r\n\tkey "+secret)

	qConv, _ := f.enqueue(queued, "mailer")
	sConv, sRun := f.enqueue(started, "mailer")
	f.recorded(eventlog.Append(ctx, f.pool, events.RunStarted, sConv, events.RunStartedPayload{RunID: sRun, ConversationID: sConv, Agent: "mailer"}))
	f.recorded(eventlog.Append(ctx, f.pool, events.RunStep, sConv, events.RunStepPayload{RunID: sRun}))
	wConv, wRun := f.enqueue(waiting, "mailer")
	f.recorded(eventlog.Append(ctx, f.pool, events.RunStarted, wConv, events.RunStartedPayload{RunID: wRun, ConversationID: wConv, Agent: "mailer"}))
	f.recorded(eventlog.Append(ctx, f.pool, events.RunSuspended, wConv, events.RunSuspendedPayload{RunID: wRun, ActionID: "x"}))
	rConv, rRun := f.enqueue(retrying, "mailer")
	f.recorded(eventlog.Append(ctx, f.pool, events.RunFailed, rConv, events.RunFailedPayload{RunID: rRun, Class: "transient", Retry: true}))
	fConv, fRun := f.enqueue(failed, "mailer")
	f.recorded(eventlog.Append(ctx, f.pool, events.RunStarted, fConv, events.RunStartedPayload{RunID: fRun, ConversationID: fConv, Agent: "mailer"}))
	f.recorded(eventlog.Append(ctx, f.pool, events.RunFailed, fConv, events.RunFailedPayload{RunID: fRun, Class: "permanent"}))
	dConv, dRun := f.enqueue(done, "mailer")
	f.recorded(eventlog.Append(ctx, f.pool, events.RunStarted, dConv, events.RunStartedPayload{RunID: dRun, ConversationID: dConv, Agent: "mailer"}))
	f.recorded(eventlog.Append(ctx, f.pool, events.RunFinished, dConv, events.RunFinishedPayload{RunID: dRun}))
	f.exec(`UPDATE core.conversations SET active_run = NULL WHERE id IN ($1, $2, $3)`, dConv, fConv, rConv)

	rows, err := page.EmailTriage(ctx, 50)
	if err != nil || len(rows) != 7 {
		t.Fatalf("%v %+v", err, rows)
	}
	want := []struct {
		id          int64
		state, conv string
	}{{done, dashboard.TriageDone, dConv}, {failed, dashboard.TriageFailed, fConv}, {retrying, dashboard.TriageRetrying, rConv},
		{waiting, dashboard.TriageWaiting, wConv}, {started, dashboard.TriageStarted, sConv}, {queued, dashboard.TriageQueued, qConv},
		{owed, dashboard.TriagePending, ""}}
	for i, w := range want {
		r := rows[i]
		if r.Message != w.id || r.State != w.state || r.ConversationID != w.conv || r.Account != "work" {
			t.Errorf("row %d: %+v, want message %d %s in %q", i, r, w.id, w.state, w.conv)
		}
		if w.conv != "" && (r.Agent != "mailer" || r.RunID == "") {
			t.Errorf("row %d names no agent or run: %+v", i, r)
		}
	}
	hostile := rows[0]
	if hostile.From != `"Mallory" <m@evil.example>` {
		t.Errorf("from %q", hostile.From)
	}
	if hostile.Subject != "Café <img src=x onerror=alert(1)> key "+redact.Token("MODEL_KEY") {
		t.Errorf("subject %q", hostile.Subject)
	}
	if two, err := page.EmailTriage(ctx, 2); err != nil || len(two) != 2 || two[0].Message != done || two[1].Message != failed {
		t.Errorf("the newest two: %v %+v", err, two)
	}

	f.exec(`UPDATE email.accounts SET last_error = $1, last_error_at = now() WHERE name = 'work'`, "the server said [AUTHENTICATIONFAILED] "+secret)
	f.exec(`INSERT INTO email.accounts (name, address, imap_host, imap_port, imap_tls, smtp_host, smtp_port, smtp_tls, username, password_secret, last_sync)
		VALUES ('home', 'me@home.example', 'imap.example.com', 993, 'tls', 'smtp.example.com', 465, 'tls', 'me', 'EMAIL_HOME', now())`)
	accounts, err := page.EmailAccounts(ctx)
	if err != nil || len(accounts) != 2 {
		t.Fatalf("%v %+v", err, accounts)
	}
	home, work := accounts[0], accounts[1]
	if home.Name != "home" || home.LastSync == nil || home.LastError != "" || home.LastErrorAt != nil {
		t.Errorf("home %+v", home)
	}
	if work.Name != "work" || work.LastSync != nil || work.LastErrorAt == nil || strings.Contains(work.LastError, secret) ||
		!strings.Contains(work.LastError, "AUTHENTICATIONFAILED") {
		t.Errorf("work %+v", work)
	}

	action := func(tool, state string, at time.Time) string {
		var id string
		f.row(`INSERT INTO core.actions (tool, tool_version, agent, args, envelope, policy_version, hash, expires_at, created_at)
			VALUES ($1, '0.1.0', 'mailer', '{}', jsonb_build_object('summary', 'Send “Re: hi” to '||$1||' '||$3::text), 3, 'h', now() + interval '1 day', $2)
			RETURNING id::text`, &id, tool, at, secret)
		f.exec(`INSERT INTO core.approvals (action_id, state) VALUES ($1, $2)`, id, state)
		return id
	}
	now := time.Now()
	older := action("email.send", "pending", now.Add(-time.Hour))
	newer := action("email.reply", "pending", now)
	action("email.send", "rejected", now)
	action("host.exec", "pending", now)
	drafts, err := page.EmailDrafts(ctx, 50)
	if err != nil || len(drafts) != 2 || drafts[0].Approval != newer || drafts[1].Approval != older || drafts[0].Tool != "email.reply" ||
		drafts[0].Agent != "mailer" || strings.Contains(drafts[0].Summary, secret) || !strings.HasPrefix(drafts[0].Summary, "Send “Re: hi” to email.reply") {
		t.Errorf("drafts %v %+v", err, drafts)
	}
}
