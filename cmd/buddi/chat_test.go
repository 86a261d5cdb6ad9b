package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
)

// scriptedServe starts buddi serve with an account on the scripted model server (trusted
// through SSL_CERT_FILE) assigned to @dev.
func scriptedServe(t *testing.T) (*pt.Server, *served, []string) {
	t.Helper()
	model, s, vars, _ := scriptedServeAt(t)
	return model, s, vars
}

func scriptedServeAt(t *testing.T) (*pt.Server, *served, []string, string) {
	t.Helper()
	return scriptedServeWith(t, nil, nil)
}

// scriptedServeWith is scriptedServeAt with more environment and a step run before buddi
// serve starts (after the database is migrated).
func scriptedServeWith(t *testing.T, extra []string, before func(vars []string)) (*pt.Server, *served, []string, string) {
	t.Helper()
	model := pt.New(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, model.CAPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	home, port, vars := env(t, append([]string{"BUDDI_VAULT_KEY=aGVsbG8taGVsbG8taGVsbG8taGVsbG8taGVsbG8tISE=", "SSL_CERT_FILE=" + ca}, extra...)...)
	if code, out, errOut := runWithInput(t, vars, pt.APIKey+"\n", "vault", "set", "MODEL_KEY"); code != 0 {
		t.Fatalf("vault set: %d %s%s", code, out, errOut)
	}
	if code, out, errOut := runBuddi(t, vars, 2*time.Minute, "db", "migrate"); code != 0 {
		t.Fatalf("db migrate: %d %s%s", code, out, errOut)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "accounts", "add", "scripted", "--wire", "anthropic", "--base-url", model.URL, "--secret", "MODEL_KEY"); code != 0 {
		t.Fatalf("accounts add: %d %s%s", code, out, errOut)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "set", "@dev", "--account", "scripted", "--model", "model-one"); code != 0 {
		t.Fatalf("agents set: %d %s%s", code, out, errOut)
	}
	if before != nil {
		before(vars)
	}
	s := startServe(t, home, port, vars)
	s.health()
	return model, s, vars, home
}

// buddi ask through a running buddi: the reply streams, the tool call is echoed, the
// approval card is answered in place with "a", and the resumed run answers with the result.
func TestAskAnswersAnApprovalInPlace(t *testing.T) {
	model, s, vars := scriptedServe(t)
	dir := t.TempDir()
	model.Script(
		pt.Tools(pt.ToolCall{ID: "toolu_1", Name: provider.WireToolName("developer.workspace"), Args: `{"directory":"` + dir + `"}`}),
		pt.Text("Your workspace ", "is set."),
	)
	code, out, errOut := runWithInput(t, vars, "a\n", "ask", "--agent", "@dev", "work in my project")
	if code != 0 {
		t.Fatalf("ask: exit %d\n%s\n%s\n%s", code, out, errOut, s.log.String())
	}
	if !strings.Contains(out, "Your workspace is set.") {
		t.Fatalf("the reply did not stream to stdout:\n%s", out)
	}
	if !strings.Contains(errOut, "→ developer.workspace") || !strings.Contains(errOut, "approval needed") {
		t.Fatalf("the tool call and its card were not shown:\n%s", errOut)
	}
	if !strings.Contains(string(model.Served()[1].Body), dir) {
		t.Fatal("the resumed step did not carry the tool's result")
	}
	// The workspace is the approved one.
	code, out, _ = runBuddi(t, vars, time.Minute, "developer", "workspace", "show", "--json")
	if code != 0 || !strings.Contains(out, dir) {
		t.Fatalf("developer workspace: %d %s", code, out)
	}
}

// buddi ask --json reports the turn; a failure prints the owner's sentence and exits 1.
func TestAskJSONAndFailure(t *testing.T) {
	model, _, vars, home := scriptedServeAt(t)
	model.Script(pt.Text("Hello there."))
	code, out, errOut := runBuddi(t, vars, time.Minute, "ask", "--agent", "@dev", "--json", "hi")
	if code != 0 {
		t.Fatalf("ask --json: exit %d\n%s%s", code, out, errOut)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if raw["status"] != "finished" || raw["text"] != "Hello there." || raw["conversation_id"] == "" {
		t.Fatalf("ask --json: %v", raw)
	}
	// @dev can run; the concierge has no account yet, and says how to give it one.
	code, out, errOut = runBuddi(t, vars, time.Minute, "agents", "list", "--json")
	if code != 0 {
		t.Fatalf("agents list: %d %s", code, errOut)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		switch a["id"] {
		case "developer":
			if a["available"] != true {
				t.Fatalf("@dev: %v", a)
			}
		case "concierge":
			if a["available"] != false || !strings.Contains(a["problem"].(string), "buddi agents set @buddi") {
				t.Fatalf("concierge: %v", a)
			}
		}
	}
	model.Script(pt.Error(401))
	code, _, errOut = runBuddi(t, vars, time.Minute, "ask", "--agent", "@dev", "again")
	if code != 1 || !strings.Contains(errOut, "refused this account's key") {
		t.Fatalf("a refused key: exit %d\n%s", code, errOut)
	}
	// The owner was told where they asked: the failed turn is not also a failed job.
	var jobs struct {
		Failed []struct{ ID int64 }      `json:"failed"`
		Causes []struct{ Family string } `json:"causes"`
	}
	db := dbConn(t, home)
	waitFor(t, "the failed turn's job to end", time.Minute, func() bool {
		var n int
		return db.QueryRow(t.Context(), `SELECT count(*) FROM river.river_job WHERE kind = 'run.start' AND state IN ('running', 'available', 'retryable', 'scheduled')`).Scan(&n) == nil && n == 0
	})
	if code, out, _ := runBuddi(t, vars, time.Minute, "jobs", "--json"); code != 0 || json.Unmarshal([]byte(out), &jobs) != nil || len(jobs.Failed) != 0 {
		t.Fatalf("a failed interactive turn is a failed job: %d\n%s", code, out)
	}
	// A failed job (an unattended one's) is grouped by its cause; dismissed, it is no longer
	// counted.
	if _, err := db.Exec(t.Context(), `INSERT INTO river.river_job (args, kind, max_attempts, queue, state, attempt, attempted_at, finalized_at, errors)
		VALUES ('{}', 'run.start', 8, 'runs', 'discarded', 8, now(), now(),
		ARRAY[jsonb_build_object('at', now(), 'attempt', 8, 'error', 'anthropic: The model provider refused this account''s key')])`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the failed job", time.Minute, func() bool {
		code, out, _ = runBuddi(t, vars, time.Minute, "jobs", "--json")
		return code == 0 && json.Unmarshal([]byte(out), &jobs) == nil && len(jobs.Failed) == 1
	})
	if len(jobs.Causes) != 1 || jobs.Causes[0].Family != "refused-key" {
		t.Fatalf("jobs --json:\n%s", out)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "jobs"); code != 0 || !strings.Contains(out, "refused the account's key") {
		t.Fatalf("jobs: %d\n%s", code, out)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "jobs", "dismiss", "--all"); code != 0 || !strings.Contains(out, "dismissed 1 job") {
		t.Fatalf("jobs dismiss --all: %d %s%s", code, out, errOut)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "jobs"); code != 0 || !strings.Contains(out, "No failed jobs.") {
		t.Fatalf("after dismissing: %d\n%s", code, out)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "jobs", "retry"); code != 2 || !strings.Contains(errOut, "--all") {
		t.Fatalf("retry with nothing named: %d %s", code, errOut)
	}
}

// An answer that broke off mid-stream is tried again, and what ask prints as the answer is
// the whole answer once, not the pieces of every attempt glued together.
func TestAskAfterABrokenStream(t *testing.T) {
	model, _, vars := scriptedServe(t)
	model.Script(pt.Reply{Text: []string{"Half ", "an ", "answer"}, DropAfter: 1}, pt.Text("A whole answer."))
	code, out, errOut := runBuddi(t, vars, 2*time.Minute, "ask", "--agent", "@dev", "--json", "hi")
	if code != 0 {
		t.Fatalf("ask --json: exit %d\n%s%s", code, out, errOut)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if raw["status"] != "finished" || raw["text"] != "A whole answer." {
		t.Fatalf("ask --json after a broken stream: %v", raw)
	}
}

// Without a running buddi, chat and ask say to start it, exit 3.
func TestAskWithoutServer(t *testing.T) {
	t.Parallel()
	_, _, vars := env(t)
	code, _, errOut := runBuddi(t, vars, time.Minute, "ask", "hi")
	if code != 3 || !strings.Contains(errOut, "buddi serve") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// buddi chat: /help, two turns, /new starts a new conversation, --last carries on the
// latest one.
func TestChatSession(t *testing.T) {
	model, _, vars := scriptedServe(t)
	model.Script(pt.Text("Hi."), pt.Text("Still here."), pt.Text("Fresh start."), pt.Text("Welcome back."))
	code, out, errOut := runWithInput(t, vars, "/help\nhello\nhow are you\n/new\nagain\n/bogus\n/quit\n", "chat", "--agent", "@dev")
	if code != 0 {
		t.Fatalf("chat: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"Hi.", "Still here.", "Fresh start."} {
		if !strings.Contains(out, want) {
			t.Fatalf("chat output lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"/retry", "you asked for a new one", "unknown command /bogus"} {
		if !strings.Contains(errOut, want) {
			t.Fatalf("chat's stderr lacks %q:\n%s", want, errOut)
		}
	}
	// The first two turns shared a conversation; the third began another.
	served := model.Served()
	if !strings.Contains(string(served[1].Body), "hello") || strings.Contains(string(served[2].Body), "hello") {
		t.Fatal("the conversations were not kept apart")
	}
	code, out, errOut = runWithInput(t, vars, "one more\n", "chat", "--agent", "@dev", "--last")
	if code != 0 || !strings.Contains(out, "Welcome back.") || !strings.Contains(errOut, "carrying on conversation") {
		t.Fatalf("chat --last: %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(string(model.Served()[3].Body), "again") {
		t.Fatal("--last did not carry on the latest conversation")
	}
}
