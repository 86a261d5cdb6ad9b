package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// mailRows is an Email over fixed rows, recording the limits it was asked for.
type mailRows struct {
	accounts []EmailAccount
	triage   []EmailTriage
	drafts   []EmailDraft
	err      error
	asked    []int
}

func (m *mailRows) EmailAccounts(context.Context) ([]EmailAccount, error) { return m.accounts, m.err }

func (m *mailRows) EmailTriage(_ context.Context, limit int) ([]EmailTriage, error) {
	m.asked = append(m.asked, limit)
	return m.triage, nil
}

func (m *mailRows) EmailDrafts(_ context.Context, limit int) ([]EmailDraft, error) {
	m.asked = append(m.asked, limit)
	return m.drafts, nil
}

// The Email page's read: the accounts (no password among their fields), the triage and the
// drafts as the implementation gives them, 50 of each asked for, empty lists as [] (never
// null), a failed read a 500 with its sentence, and no route without Deps.Email.
func TestEmailRoute(t *testing.T) {
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	get := func(deps Deps) (int, map[string]json.RawMessage) {
		deps.CLIToken = "t0k"
		srv := httptest.NewServer(NewServer(deps).Handler())
		defer srv.Close()
		req, _ := http.NewRequest("GET", srv.URL+"/api/email", nil)
		req.Header.Set("Authorization", "Bearer t0k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]json.RawMessage
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}

	empty := &mailRows{}
	code, body := get(Deps{Email: empty})
	if code != 200 || string(body["accounts"]) != "[]" || string(body["triage"]) != "[]" || string(body["drafts"]) != "[]" {
		t.Fatalf("an empty page: %d %v", code, body)
	}
	if len(empty.asked) != 2 || empty.asked[0] != emailShown || empty.asked[1] != emailShown {
		t.Errorf("asked for %v, want 50 triaged messages and 50 drafts", empty.asked)
	}

	rows := &mailRows{
		accounts: []EmailAccount{{Name: "work", Address: "me@example.com", LastError: "the server said [AUTHENTICATIONFAILED] no", LastErrorAt: &at}},
		triage: []EmailTriage{{Message: 7, Account: "work", From: "x@evil.example", Subject: "<img src=x onerror=alert(1)>", Received: at,
			State: TriageDone, RunID: "r1", ConversationID: "c1", Agent: "mailer"}},
		drafts: []EmailDraft{{Approval: "a1", Tool: "email.reply", Agent: "mailer", Summary: "Send “Re: hi” from me@example.com to 1 recipient", CreatedAt: at}},
	}
	code, body = get(Deps{Email: rows})
	var accounts []map[string]any
	if err := json.Unmarshal(body["accounts"], &accounts); code != 200 || err != nil || len(accounts) != 1 {
		t.Fatalf("%d %s", code, body["accounts"])
	}
	for _, k := range []string{"name", "address", "last_sync", "last_error", "last_error_at"} {
		if _, ok := accounts[0][k]; !ok {
			t.Errorf("an account has no %q: %v", k, accounts[0])
		}
	}
	for k := range accounts[0] {
		if strings.Contains(k, "password") || strings.Contains(k, "secret") {
			t.Errorf("an account carries %q", k)
		}
	}
	var triage []map[string]any
	if err := json.Unmarshal(body["triage"], &triage); err != nil || len(triage) != 1 || triage[0]["subject"] != "<img src=x onerror=alert(1)>" ||
		triage[0]["state"] != "done" || triage[0]["conversation_id"] != "c1" || triage[0]["received"] != "2026-12-02T09:00:00Z" {
		t.Errorf("triage %s", body["triage"])
	}
	var drafts []map[string]any
	if err := json.Unmarshal(body["drafts"], &drafts); err != nil || len(drafts) != 1 || drafts[0]["approval"] != "a1" || drafts[0]["tool"] != "email.reply" {
		t.Errorf("drafts %s", body["drafts"])
	}

	code, body = get(Deps{Email: &mailRows{err: errors.New("relation email.accounts does not exist")}})
	if code != 500 || !strings.Contains(string(body["error"]), "the email accounts could not be read") {
		t.Errorf("a failed read: %d %s", code, body["error"])
	}
	if code, _ := get(Deps{}); code != http.StatusNotFound {
		t.Errorf("without Deps.Email the route answers %d", code)
	}
}
