package dashboard_test

import (
	"context"
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

// A database that hangs gets the owner an answer in the request's time, not a wait: the
// message is refused with 503 and nothing of it is stored. Shown with a lock held on the
// conversations, which a hung database stands for.
func TestMessageAgainstAHungDatabase(t *testing.T) {
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
	catalog := func() (*agents.Catalog, error) { return agents.Load(agents.Config{AgentsDir: dir}) }
	srv := dashboard.NewServer(dashboard.Deps{
		Health: func(context.Context) health.Report { return health.Report{Status: "ok"} },
		Pool:   pool, Queue: run.JobQueue{Inserter: insert}, Seal: key, RequestTimeout: 300 * time.Millisecond,
		Chat: &dashboard.Chat{Conversations: conversation.NewStore(pool), Catalog: catalog,
			Start: func(string) conversation.StartRun {
				return func(context.Context, pgx.Tx, conversation.Conversation, string) error { return nil }
			}},
	})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	signIn(t, pool, key, ts.Listener.Addr().String())

	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE core.conversations IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			_ = tx.Rollback(ctx)
		}
	}
	defer release()

	type answer struct {
		status int
		body   map[string]any
	}
	answered := make(chan answer, 1)
	go func() {
		status, body := do(t, "POST", ts.URL+"/api/messages", map[string]string{"Content-Type": "application/json"}, `{"text":"are you there?"}`)
		answered <- answer{status, body}
	}()
	var got answer
	select {
	case got = <-answered:
	case <-time.After(5 * time.Second):
		release()
		t.Fatal("no answer within 5 s while the database hung")
	}
	release()
	if msg, _ := got.body["error"].(string); got.status != 503 || !strings.Contains(msg, "did not answer in time") {
		t.Fatalf("POST /api/messages = %d %v, want 503 saying the database did not answer", got.status, got.body)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM core.messages`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d messages stored from a refused send", n)
	}
	// With the database back the same message goes through.
	if status, body := do(t, "POST", ts.URL+"/api/messages", map[string]string{"Content-Type": "application/json"}, `{"text":"are you there?"}`); status != 202 {
		t.Fatalf("after the lock: %d %v", status, body)
	}
}
