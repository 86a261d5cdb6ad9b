package app

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"buddi/actors"
	"buddi/agents"
	"buddi/core/conversation"
	"buddi/examples"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/queue"
	"buddi/runtime/run"
	"buddi/supervisor"
)

// feedManifest is a test-only plugin: its source asks the holder of the overview role to
// handle each line of a file, with the line as the dedup key (no cursor: the key is enough).
func feedManifest(path string) plugins.Manifest {
	return plugins.Manifest{Name: "testfeed", Version: "0.0.1", Sources: []plugins.Source{{
		ID: "testfeed.lines", Description: "lines of a file", Period: time.Hour,
		Poll: func(ctx context.Context, enqueue plugins.EnqueueRun) error {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if err := enqueue(ctx, "role:overview", sc.Text(), sc.Text()); err != nil {
					return err
				}
			}
			return sc.Err()
		},
	}}}
}

// buddi serve's wiring of sources: each runs under root/sources, and what it enqueues is an
// unattended run of the role's holder in a conversation of its own, its job on the queue.
func TestSourcesStartUnattendedRunsUnderRootSources(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	insert, err := queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	feed := filepath.Join(t.TempDir(), "feed.txt")
	if err := os.WriteFile(feed, []byte("The invoice from Acme is due Friday.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	convs := conversation.NewStore(pool)
	runner := &run.Runner{Pool: pool, Conversations: convs, Insert: insert,
		Catalog: func() (*agents.Catalog, error) { return agents.Load(agents.Config{Examples: examples.FS}) }}

	if _, err := sourceActors([]plugins.Manifest{feedManifest(feed), feedManifest(feed)}, pool, convs, runner, nil, nil, nil); err == nil ||
		!strings.Contains(err.Error(), "testfeed.lines") {
		t.Errorf("two sources of one id: %v; want them refused", err)
	}
	children, err := sourceActors([]plugins.Manifest{feedManifest(feed)}, pool, convs, runner, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sys := actors.NewSystem(nil, nil)
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = sys.Shutdown(sctx)
	})
	tree, err := supervisor.Build(sys, supervisor.Parts{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tree.Start(supervisor.Services{Sources: children}); err != nil {
		t.Fatal(err)
	}

	var runID string
	pgtest.Eventually(t, "the source's poll", func() bool {
		err := pool.QueryRow(ctx, `SELECT e.run_id FROM core.source_enqueues e JOIN core.source_runs r ON r.id = e.source_run
			WHERE e.source = 'testfeed.lines' AND r.state = 'ok'`).Scan(&runID)
		return err == nil
	})
	var agent, surface, text string
	var interactive bool
	if err := pool.QueryRow(ctx, `SELECT c.agent, c.surface, m.body->>'text', (j.args->>'interactive')::boolean
		FROM core.conversations c JOIN core.messages m ON m.conversation_id = c.id AND m.kind = 'user'
		JOIN river.river_job j ON j.kind = 'run.start' AND j.args->>'run_id' = $1
		WHERE c.active_run = $1::uuid`, runID).Scan(&agent, &surface, &text, &interactive); err != nil {
		t.Fatalf("the source's run: %v", err)
	}
	if agent != "concierge" || surface != conversation.SurfaceMission || interactive {
		t.Errorf("the run: agent %s on %s, interactive %v; want the overview's holder, unattended, in a conversation of its own", agent, surface, interactive)
	}
	if !strings.Contains(text, "The source testfeed.lines asks") || !strings.Contains(text, "The invoice from Acme is due Friday.") {
		t.Errorf("the run's first turn: %q", text)
	}
	found := false
	for _, n := range sys.Tree() {
		found = found || (n.Path == "root/sources/testfeed.lines" && n.State == "running")
	}
	if !found {
		t.Errorf("no running root/sources/testfeed.lines in %+v", sys.Tree())
	}
}
