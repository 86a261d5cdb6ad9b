package agents

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"buddi/actors/actorstest"
)

// runLive starts l's watch for the test's duration.
func runLive(t *testing.T, l *Live) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		_ = l.Close()
	})
}

// A live catalogue parses the files once; an edit, a new agent in a new directory and a
// removed file each reach the next Load, and each signals Changes.
func TestLiveFollowsTheFiles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.owner(t, "a.md", agentFile("a", "@a"))
	l := NewLive(b.config(), nil)
	if l.w == nil {
		t.Fatal("no watch was set")
	}
	runLive(t, l)
	first, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := l.Load(); again != first {
		t.Fatal("an unchanged catalogue was parsed again")
	}

	b.owner(t, "a.md", agentFile("a", "@alpha"))
	<-l.Changes()
	actorstest.Eventually(t, "the edited handle", func() bool {
		c, err := l.Load()
		_, ok := c.ByHandle("@alpha")
		return err == nil && ok
	})

	// A directory made after the watch began, with a private skill in it.
	b.owner(t, "b.md", agentFile("b", "@bee"))
	b.owner(t, filepath.Join("b", "skills", "notes.md"), skillFile("description: Notes."))
	actorstest.Eventually(t, "b's private skill", func() bool {
		c, err := l.Load()
		if err != nil {
			return false
		}
		a, ok := c.ByID("b")
		return ok && len(skillNames(a.Loaded)) > 0
	})

	if err := os.Remove(filepath.Join(b.agentsDir, "a.md")); err != nil {
		t.Fatal(err)
	}
	actorstest.Eventually(t, "a gone", func() bool {
		c, err := l.Load()
		_, ok := c.ByID("a")
		return err == nil && !ok
	})
}

// A directory that does not exist yet is watched from its parent: made later, it is read.
func TestLiveSeesTheDirectoryAppear(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := os.MkdirAll(filepath.Dir(b.agentsDir), 0o700); err != nil {
		t.Fatal(err)
	}
	l := NewLive(b.config(), nil)
	if l.w == nil {
		t.Fatal("no watch was set")
	}
	runLive(t, l)
	if c, err := l.Load(); err != nil || len(c.All()) != 0 {
		t.Fatalf("Load = %v, %v; want an empty catalogue", c, err)
	}
	b.owner(t, "late.md", agentFile("late", "@late"))
	actorstest.Eventually(t, "the late agent", func() bool {
		c, err := l.Load()
		_, ok := c.ByID("late")
		return err == nil && ok
	})
}

// Without a watch every Load reads the disk.
func TestLiveWithoutAWatchReadsTheDisk(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agentsDir = filepath.Join(t.TempDir(), "no", "such", "agents")
	l := NewLive(b.config(), nil)
	if l.w != nil {
		t.Fatal("a watch was set on a directory whose parent is missing")
	}
	first, _ := l.Load()
	if second, _ := l.Load(); second == first {
		t.Fatal("without a watch the catalogue was served from memory")
	}
}

// Closing the catalogue while its watch runs (buddi stopping) is no failure: Run waits for
// its own end and returns nil, so its supervisor neither restarts it nor logs an error.
func TestLiveCloseEndsRunQuietly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.owner(t, "a.md", agentFile("a", "@a"))
	l := NewLive(b.config(), nil)
	if l.w == nil {
		t.Fatal("no watch was set")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	cancel() // the actor's stop, after the close
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after Close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not end after Close")
	}
}
