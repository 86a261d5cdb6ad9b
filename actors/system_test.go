package actors_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"buddi/actors"
	"buddi/actors/actorstest"
)

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// protoactor's log lines go to our logger, next to ours, its info lines at debug.
func TestLogsJoinOurs(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	events := actorstest.NewEvents()
	sys := actors.NewSystem(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), events.Sink)
	b := &testBundle{sys: sys, events: events, probe: actorstest.NewProbe()}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), actorstest.Timeout)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	root := b.supervisor(t, nil, "root", generous)
	w := b.spawn(t, root, "w")
	b.sys.Send(w, actorstest.Crash{Reason: "boom"})
	b.events.Next(t) // the sink is called after the line is logged

	out := buf.String()
	for _, want := range []string{
		`"level":"DEBUG","msg":"actor system started","service":"actors","lib":"protoactor"`,
		`"msg":"supervisor.restarted","service":"actors","supervisor":"root","child":"root/w","reason":"boom"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
}
