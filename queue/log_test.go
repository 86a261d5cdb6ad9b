package queue

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"buddi/internal/pgtest"
)

// The client River runs logs its start and stop at info; buddi's log shows them at debug.
func TestRiverSpeaksAtDebug(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var buf lockedBuffer
	q, err := New(pool, Options{Log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Stop(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	if !strings.Contains(got, "level=DEBUG msg=\"River client started\"") {
		t.Errorf("River's start not at debug:\n%s", got)
	}
	if strings.Contains(got, "level=INFO") {
		t.Errorf("River spoke at info:\n%s", got)
	}
}

// lockedBuffer is a log written by River's goroutines and read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
