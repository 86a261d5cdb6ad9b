package app

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/events"
	"buddi/core/redact"
	"buddi/plugins/email"
	"buddi/surfaces/dashboard"
)

// emailPage serves the dashboard's Email page from the email plugin's schema and core's
// ledgers: the accounts (never their password), each message's triage with the state of its
// run, and the sends waiting for approval. Every text a stranger wrote, and every error
// sentence, is scrubbed of stored secrets on its way out (seed 004's redaction rule).
type emailPage struct {
	pool  *pgxpool.Pool
	scrub *redact.Live // nil scrubs nothing (no vault)
}

var _ dashboard.Email = emailPage{}

// emailSendTools are the tools whose pending approvals are drafts awaiting the owner.
var emailSendTools = []string{"email.send", "email.reply"}

// runKinds are the events that say where a run is.
var runKinds = []string{string(events.RunStarted), string(events.RunStep), string(events.RunToolIntent), string(events.RunSuspended),
	string(events.RunFinished), string(events.RunFailed), string(events.RunRecovered)}

func (e emailPage) clean(s string) string {
	if e.scrub == nil {
		return s
	}
	return e.scrub.String(s)
}

// EmailAccounts lists the accounts by name: their address and how their last read went.
func (e emailPage) EmailAccounts(ctx context.Context) ([]dashboard.EmailAccount, error) {
	rows, err := e.pool.Query(ctx, `SELECT name, address, last_sync, last_error, last_error_at FROM email.accounts ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("read the email accounts: %w", err)
	}
	defer rows.Close()
	out := []dashboard.EmailAccount{}
	for rows.Next() {
		var a dashboard.EmailAccount
		if err := rows.Scan(&a.Name, &a.Address, &a.LastSync, &a.LastError, &a.LastErrorAt); err != nil {
			return nil, fmt.Errorf("read the email accounts: %w", err)
		}
		a.Address, a.LastError = e.clean(a.Address), e.clean(a.LastError)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the email accounts: %w", err)
	}
	return out, nil
}

// EmailTriage lists the latest messages owed or given a triage run (at most limit; the
// message's id orders them as they were read), each with
// its run's state as its latest run event says, and the run's conversation and agent: from
// that event, or, for a run not begun yet, from the conversation it is enqueued in.
func (e emailPage) EmailTriage(ctx context.Context, limit int) ([]dashboard.EmailTriage, error) {
	rows, err := e.pool.Query(ctx, `WITH latest AS (SELECT message, account_id, state FROM email.triage ORDER BY message DESC LIMIT $3)
		SELECT t.message, a.name, m.from_addr, m.subject, m.ingested_at, t.state,
			coalesce(se.run_id, ''), coalesce(ev.kind, ''), coalesce(ev.retry, false),
			coalesce(c.id::text, q.id::text, ''), coalesce(c.agent, q.agent, '')
		FROM latest t
		JOIN email.messages m ON m.id = t.message
		JOIN email.accounts a ON a.id = t.account_id
		LEFT JOIN core.source_enqueues se ON se.source = $1 AND se.dedup_key = 'message:' || t.message
		LEFT JOIN LATERAL (SELECT kind, conversation_id, (payload->>'retry')::boolean AS retry FROM core.events
			WHERE payload ? 'run_id' AND payload->>'run_id' = se.run_id AND kind = ANY($2)
			ORDER BY id DESC LIMIT 1) ev ON true
		LEFT JOIN core.conversations c ON c.id = ev.conversation_id
		LEFT JOIN core.conversations q ON ev.kind IS NULL AND q.active_run IS NOT NULL AND q.active_run::text = se.run_id
		ORDER BY t.message DESC`, email.SourceID, runKinds, limit)
	if err != nil {
		return nil, fmt.Errorf("read the triage of the mail: %w", err)
	}
	defer rows.Close()
	out := []dashboard.EmailTriage{}
	for rows.Next() {
		var t dashboard.EmailTriage
		var owed, kind string
		var retry bool
		if err := rows.Scan(&t.Message, &t.Account, &t.From, &t.Subject, &t.Received, &owed, &t.RunID, &kind, &retry,
			&t.ConversationID, &t.Agent); err != nil {
			return nil, fmt.Errorf("read the triage of the mail: %w", err)
		}
		t.From, t.Subject = e.clean(email.HeaderLine(t.From)), e.clean(email.HeaderLine(t.Subject))
		t.State = triageState(owed, t.RunID, kind, retry)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the triage of the mail: %w", err)
	}
	return out, nil
}

// triageState is a message's triage state: owed (no run), or its run's, from the kind of the
// run's latest event.
func triageState(owed, runID, kind string, retry bool) string {
	switch {
	case owed == "pending" || runID == "":
		return dashboard.TriagePending
	case kind == "":
		return dashboard.TriageQueued
	case kind == string(events.RunFinished):
		return dashboard.TriageDone
	case kind == string(events.RunFailed) && retry:
		return dashboard.TriageRetrying
	case kind == string(events.RunFailed):
		return dashboard.TriageFailed
	case kind == string(events.RunSuspended):
		return dashboard.TriageWaiting
	}
	return dashboard.TriageStarted
}

// EmailDrafts lists the pending approvals of email.send and email.reply, newest first.
func (e emailPage) EmailDrafts(ctx context.Context, limit int) ([]dashboard.EmailDraft, error) {
	rows, err := e.pool.Query(ctx, `SELECT a.id::text, a.tool, a.agent, coalesce(a.envelope->>'summary', ''), a.created_at
		FROM core.actions a JOIN core.approvals p ON p.action_id = a.id
		WHERE p.state = 'pending' AND a.tool = ANY($1)
		ORDER BY a.created_at DESC, a.id LIMIT $2`, emailSendTools, limit)
	if err != nil {
		return nil, fmt.Errorf("read the drafts awaiting approval: %w", err)
	}
	defer rows.Close()
	out := []dashboard.EmailDraft{}
	for rows.Next() {
		var d dashboard.EmailDraft
		if err := rows.Scan(&d.Approval, &d.Tool, &d.Agent, &d.Summary, &d.CreatedAt); err != nil {
			return nil, fmt.Errorf("read the drafts awaiting approval: %w", err)
		}
		d.Summary = e.clean(d.Summary)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the drafts awaiting approval: %w", err)
	}
	return out, nil
}
