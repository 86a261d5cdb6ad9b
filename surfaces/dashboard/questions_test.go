package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/agents"
	"buddi/core/conversation"
	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/queue"
	"buddi/runtime/run"
	"buddi/surfaces/dashboard"
)

// Home's held questions: GET /api/questions lists each with the agent's handle, its text and
// its conversation; the owner's answer, sent as a message to that conversation, releases it.
func TestQuestionsAreListedUntilAnswered(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	insert, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "helper.md"), []byte("---\nid: helper\nhandle: \"@helper\"\nname: Helper\ndefault: true\n---\nYou help.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	store := conversation.NewStore(pool)
	srv := dashboard.NewServer(dashboard.Deps{
		Health: func(context.Context) health.Report { return health.Report{Status: "ok"} },
		Pool:   pool, Queue: run.JobQueue{Inserter: insert}, Seal: key,
		Chat: &dashboard.Chat{Conversations: store,
			Catalog: func() (*agents.Catalog, error) { return agents.Load(agents.Config{AgentsDir: dir}) },
			Start: func(string) conversation.StartRun {
				return func(context.Context, pgx.Tx, conversation.Conversation, string) error { return nil }
			}},
	})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	signIn(t, pool, key, ts.Listener.Addr().String())
	ctx := context.Background()

	questions := func() []any {
		t.Helper()
		code, out := do(t, "GET", ts.URL+"/api/questions", nil, "")
		if code != http.StatusOK {
			t.Fatalf("GET /api/questions: %d %v", code, out)
		}
		list, ok := out["questions"].([]any)
		if !ok {
			t.Fatalf("GET /api/questions: %v, want a list", out)
		}
		return list
	}
	if got := questions(); len(got) != 0 {
		t.Fatalf("before any question: %v", got)
	}
	sent, err := store.Send(ctx, conversation.Message{Agent: "helper", Surface: "dashboard", Text: "tidy my inbox"},
		func(context.Context, pgx.Tx, conversation.Conversation, string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := conversation.Ask(ctx, pool, sent.Conversation.ID, "helper", sent.RunID, "Archive the newsletters too?", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Finish(ctx, sent.Conversation.ID, sent.RunID, func(context.Context, pgx.Tx, conversation.Conversation, string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	got := questions()
	if len(got) != 1 {
		t.Fatalf("questions = %v, want one", got)
	}
	q := got[0].(map[string]any)
	want := map[string]string{"conversation_id": sent.Conversation.ID, "agent": "helper", "handle": "@helper", "name": "Helper", "question": "Archive the newsletters too?"}
	for k, w := range want {
		if q[k] != w {
			t.Errorf("question's %s = %v, want %q", k, q[k], w)
		}
	}
	if asked, _ := q["asked_at"].(string); asked == "" {
		t.Errorf("the question says not when it was asked: %v", q)
	}
	// The answer from Home: a message to the conversation, by its id.
	if code, out := do(t, "POST", ts.URL+"/api/messages", jsonType,
		`{"conversation_id":"`+sent.Conversation.ID+`","resume":true,"text":"yes, those too"}`); code != http.StatusAccepted {
		t.Fatalf("the answer: %d %v", code, out)
	}
	if got := questions(); len(got) != 0 {
		t.Fatalf("after the answer, questions = %v", got)
	}
	entries, err := store.Transcript(ctx, sent.Conversation.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := entries[len(entries)-1]
	if last.Kind != conversation.KindUser || !strings.Contains(string(last.Body), "yes, those too") {
		t.Fatalf("the conversation's last entry = %s %s, want the owner's answer", last.Kind, last.Body)
	}
}
