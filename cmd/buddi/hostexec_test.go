package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"buddi/core/action"
	"buddi/core/seal"
	"buddi/plugins"
	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
)

// hostCard is an approval as GET /api/approvals shows it, what this test reads of it.
type hostCard struct {
	ID       string `json:"id"`
	Tool     string `json:"tool"`
	Card     string `json:"card"`
	Reusable bool   `json:"reusable"`
	Approval struct {
		State     string `json:"state"`
		DecidedBy string `json:"decided_by"`
	} `json:"approval"`
	ConversationID string `json:"conversation_id"`
}

// post sends body to path on the served dashboard with the command line's token and
// decodes the answer into out (when not nil); it fails the test unless the status is want.
func (s *served) post(t *testing.T, path, body string, want int, out any) {
	t.Helper()
	resp, err := s.request("POST", path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("POST %s %s: %s %s", path, body, resp.Status, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("POST %s: %v in %s", path, err, raw)
		}
	}
}

// host.exec end to end through buddi serve and the dashboard's API, for an agent the owner
// granted it in its file: the first script raises a card showing the whole script with the
// remembering answers; approved for this conversation, the next script there runs without a
// card (under the standing permission, still an action in the ledger); another conversation
// asks; revoked from the dashboard, the first conversation asks again.
func TestHostExecThroughTheDashboard(t *testing.T) {
	work := t.TempDir()
	model, s, vars, home := scriptedServeWith(t, nil, func(vars []string) {
		home := ""
		for _, kv := range vars {
			if v, ok := strings.CutPrefix(kv, "BUDDI_HOME="); ok {
				home = v
			}
		}
		dir := filepath.Join(home, "agents")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		agent := "---\nid: shell\nhandle: \"@shell\"\nname: Shell\ntools:\n  - host.exec\n---\nYou run scripts on the owner's machine when asked.\n"
		if err := os.WriteFile(filepath.Join(dir, "shell.md"), []byte(agent), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "set", "@shell", "--account", "scripted", "--model", "model-one"); code != 0 {
			t.Fatalf("agents set @shell: %d %s%s", code, out, errOut)
		}
	})
	conn := dbConn(t, home)
	ctx := context.Background()
	logged := func() string {
		b, _ := os.ReadFile(filepath.Join(work, "log"))
		return strings.Join(strings.Fields(string(b)), " ")
	}
	script := func(id, word string) pt.Reply {
		args, _ := json.Marshal(map[string]any{"language": "bash", "script": "echo " + word + " >> log\necho logged " + word, "cwd": work})
		return pt.Tools(pt.ToolCall{ID: id, Name: provider.WireToolName("host.exec"), Args: string(args)})
	}
	finished := func(runID string) bool {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM core.events WHERE kind = 'run.finished' AND payload->>'run_id' = $1`, runID).Scan(&n)
		return err == nil && n == 1
	}
	pending := func() []hostCard {
		var cards []hostCard
		s.getJSON(t, "/api/approvals", &cards)
		return cards
	}
	waitCard := func(conv string) hostCard {
		t.Helper()
		var found hostCard
		waitFor(t, "a host.exec card in "+conv, time.Minute, func() bool {
			for _, c := range pending() {
				if c.Tool == "host.exec" && c.ConversationID == conv {
					found = c
					return true
				}
			}
			return false
		})
		return found
	}

	// The first script: a card with the whole script, offering to remember.
	model.Script(script("toolu_1", "one"), pt.Text("Logged one."))
	conv, run1 := postMessage(t, s, map[string]any{"agent": "@shell", "text": "log one", "surface": "dashboard", "new": true})
	card := waitCard(conv)
	if !card.Reusable || !strings.Contains(card.Card, "Run bash on the host: echo one >> log") || !strings.Contains(card.Card, "echo one >> log\necho logged one") {
		t.Fatalf("the first card: reusable %v\n%s", card.Reusable, card.Card)
	}
	if logged() != "" {
		t.Fatalf("the script ran before its approval: %q", logged())
	}
	s.post(t, "/api/approvals/"+card.ID+"/approve", `{"remember":"conversation"}`, http.StatusOK, nil)
	waitFor(t, "the first run to finish", time.Minute, func() bool { return finished(run1) })
	if logged() != "one" || !strings.Contains(string(model.Served()[1].Body), "logged one") {
		t.Fatalf("after the approval: log %q", logged())
	}

	// The next script in the same conversation runs without a card.
	model.Script(script("toolu_2", "two"), pt.Text("Logged two."))
	_, run2 := postMessage(t, s, map[string]any{"agent": "@shell", "text": "log two", "surface": "dashboard", "conversation_id": conv, "resume": true})
	waitFor(t, "the second run to finish", time.Minute, func() bool { return finished(run2) })
	var by string
	var attempts int
	if err := conn.QueryRow(ctx, `SELECT ap.decided_by, (SELECT count(*) FROM core.effect_attempts e WHERE e.action_id = a.id)
		FROM core.actions a JOIN core.approvals ap ON ap.action_id = a.id WHERE a.run_id = $1`, run2).Scan(&by, &attempts); err != nil {
		t.Fatal(err)
	}
	if logged() != "one two" || !strings.HasPrefix(by, "standing:") || attempts != 1 {
		t.Fatalf("the second script: log %q, decided by %q, %d ledger attempts; want it run under the standing permission", logged(), by, attempts)
	}

	// Another conversation asks.
	model.Script(script("toolu_3", "three"), pt.Text("Declined."))
	other, run3 := postMessage(t, s, map[string]any{"agent": "@shell", "text": "log three", "surface": "dashboard", "new": true})
	if other == conv {
		t.Fatal("the new conversation is the first one")
	}
	third := waitCard(other)
	s.post(t, "/api/approvals/"+third.ID+"/reject", `{}`, http.StatusOK, nil)
	waitFor(t, "the third run to finish", time.Minute, func() bool { return finished(run3) })

	// Revoked from the dashboard: the first conversation asks again.
	var perms []struct {
		ID             int64  `json:"id"`
		Tool           string `json:"tool"`
		Agent          string `json:"agent"`
		ConversationID string `json:"conversation_id"`
	}
	s.getJSON(t, "/api/permissions", &perms)
	if len(perms) != 1 || perms[0].Tool != "host.exec" || perms[0].Agent != "shell" || perms[0].ConversationID != conv {
		t.Fatalf("standing permissions: %+v", perms)
	}
	s.post(t, fmt.Sprintf("/api/permissions/%d/revoke", perms[0].ID), `{}`, http.StatusOK, nil)
	model.Script(script("toolu_4", "four"), pt.Text("Logged four."))
	_, run4 := postMessage(t, s, map[string]any{"agent": "@shell", "text": "log four", "surface": "dashboard", "conversation_id": conv, "resume": true})
	fourth := waitCard(conv)
	if logged() != "one two" {
		t.Fatalf("after the revocation the script ran without a card: %q", logged())
	}
	s.post(t, "/api/approvals/"+fourth.ID+"/approve", `{}`, http.StatusOK, nil)
	waitFor(t, "the fourth run to finish", time.Minute, func() bool { return finished(run4) })
	if logged() != "one two four" {
		t.Fatalf("log %q", logged())
	}
	// A card raised inside a delegation offers no remembering, and remembering it is refused.
	key, err := seal.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	delegated, err := action.Create(ctx, tx, key, action.Proposal{Call: plugins.Call{Tool: "host.exec", Agent: "shell", DelegationDepth: 1,
		Args: json.RawMessage(`{"language":"bash","script":"echo five >> log"}`)}, Version: "1.0.0",
		Envelope: plugins.Envelope{Summary: "Run bash on the host: echo five >> log", Effects: []plugins.Effect{plugins.EffectExec}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var shown hostCard
	s.getJSON(t, "/api/approvals/"+delegated.ID, &shown)
	if shown.Reusable {
		t.Errorf("a delegate's card offers remembering")
	}
	s.post(t, "/api/approvals/"+delegated.ID+"/approve", `{"remember":"all"}`, http.StatusUnprocessableEntity, nil)

	code, out, errOut := runBuddi(t, vars, time.Minute, "permissions", "list")
	if code != 0 || !strings.Contains(out, "host.exec") || !bytes.Contains([]byte(out), []byte("dashboard")) {
		t.Errorf("buddi permissions list: %d %s%s", code, out, errOut)
	}
}
