package pgcluster

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// At info, the first start says it creates the database; a start or stop says nothing (every
// command that opens the database makes one).
func TestStartTellsTheFirstStartOnly(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	c := newTestCluster(t, filepath.Join(t.TempDir(), "pg"))
	c.log = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	for i := range 2 {
		if err := c.Start(startCtx(t)); err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := c.Stop(ctx)
		cancel()
		if err != nil {
			t.Fatalf("stop %d: %v", i, err)
		}
		if i == 0 {
			buf.mark()
		}
	}
	first, second := buf.parts()
	if !strings.Contains(first, `msg="creating the database (first start, takes a few seconds)…"`) {
		t.Errorf("the first start does not say it creates the database:\n%s", first)
	}
	for _, quiet := range []string{"postgres started", "postgres stopped", "initdb"} {
		if strings.Contains(first+second, quiet) {
			t.Errorf("%q at info:\n%s%s", quiet, first, second)
		}
	}
	if strings.Contains(second, "creating the database") {
		t.Errorf("the second start says it creates the database:\n%s", second)
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	at  int
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) mark() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.at = b.buf.Len()
}

func (b *syncBuffer) parts() (string, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	return s[:b.at], s[b.at:]
}
