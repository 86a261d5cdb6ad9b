package actors_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"buddi/actors"
	"buddi/actors/actorstest"
)

// Shutdown drains parents before children, then stops leaves before their
// parents; every actor sees Drain, Stopping, Stopped; nothing is left running
// and the system refuses further work.
func TestShutdown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	root := b.supervisor(t, nil, "root", generous)
	sup := b.supervisor(t, root, "sup", generous)
	w1 := b.spawn(t, sup, "w1")
	b.spawn(t, sup, "w2")
	b.spawn(t, root, "w3")

	ctx, cancel := context.WithTimeout(context.Background(), actorstest.Timeout)
	defer cancel()
	if err := b.sys.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}

	seen := b.probe.Drain() // everything was sent before Shutdown returned
	at := func(path string, msg any) int {
		t.Helper()
		i := slices.IndexFunc(seen, func(s actorstest.Seen) bool { return s.Path == path && s.Msg == msg })
		if i < 0 {
			t.Fatalf("%s never saw %T in %+v", path, msg, seen)
		}
		return i
	}
	for _, path := range []string{"root/sup/w1", "root/sup/w2", "root/w3"} {
		var got []any
		for _, s := range seen {
			if s.Path == path {
				got = append(got, s.Msg)
			}
		}
		if want := []any{actors.Drain{}, actors.Stopping{}, actors.Stopped{}}; !slices.Equal(got, want) {
			t.Errorf("%s: got %#v, want %#v", path, got, want)
		}
	}
	drained := max(at("root/sup/w1", actors.Drain{}), at("root/sup/w2", actors.Drain{}), at("root/w3", actors.Drain{}))
	if first := min(at("root/sup/w1", actors.Stopping{}), at("root/sup/w2", actors.Stopping{}), at("root/w3", actors.Stopping{})); drained > first {
		t.Errorf("a stop came before the last Drain: %+v", seen)
	}
	if at("root/w3", actors.Drain{}) > min(at("root/sup/w1", actors.Drain{}), at("root/sup/w2", actors.Drain{})) {
		t.Errorf("a child was drained before its parent's level: %+v", seen)
	}
	if max(at("root/sup/w1", actors.Stopped{}), at("root/sup/w2", actors.Stopped{})) > at("root/w3", actors.Stopping{}) {
		t.Errorf("depth 1 began stopping before depth 2 had stopped: %+v", seen)
	}

	if !b.allStopped() {
		t.Errorf("got %+v, want every node stopped", b.sys.Tree())
	}
	if _, err := b.sys.Spawn(root, "late", b.probe.Produce); !errors.Is(err, actors.ErrShutdown) {
		t.Errorf("Spawn after Shutdown: got %v, want ErrShutdown", err)
	}
	if _, err := b.sys.NewSupervisor(nil, "late", generous); !errors.Is(err, actors.ErrShutdown) {
		t.Errorf("NewSupervisor after Shutdown: got %v, want ErrShutdown", err)
	}
	if _, err := b.sys.Request(ctx, w1, actorstest.Echo{Value: 1}); !errors.Is(err, actors.ErrNotRunning) {
		t.Errorf("Request after Shutdown: got %v, want ErrNotRunning", err)
	}
	if _, ok := <-b.sys.Escalations(); ok {
		t.Error("Escalations still open after Shutdown")
	}
	if err := b.sys.Shutdown(ctx); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}

// Shutdown keeps to its ctx (not protoactor's fixed 10 s) and names the actor
// that did not stop; the actor stops once it is unblocked.
func TestShutdownDeadline(t *testing.T) {
	t.Parallel()
	b := setup(t)
	root := b.supervisor(t, nil, "root", generous)
	w := b.spawn(t, root, "w")
	release := make(chan struct{})
	b.sys.Send(w, actorstest.Block{Until: release})
	b.probe.WaitFor(t, "root/w", actorstest.Block{Until: release})

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := b.sys.Shutdown(ctx)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("Shutdown took %s with a 300ms ctx", elapsed)
	}
	if !errors.Is(err, actors.ErrStopTimeout) || !strings.Contains(err.Error(), "root/w") {
		t.Errorf("got %v, want ErrStopTimeout naming root/w", err)
	}
	close(release)
	actorstest.Eventually(t, "every node stopped", b.allStopped)
}

// Stop removes one actor from the tree; its name can then be used again.
func TestStop(t *testing.T) {
	t.Parallel()
	b := setup(t)
	root := b.supervisor(t, nil, "root", generous)
	w, first := b.spawnInstance(t, root, "w")
	ctx, cancel := context.WithTimeout(context.Background(), actorstest.Timeout)
	defer cancel()
	if err := b.sys.Stop(ctx, w); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	b.probe.WaitFor(t, "root/w", actors.Stopped{})
	if _, ok := actorstest.Find(b.sys.Tree(), "root/w"); ok {
		t.Errorf("root/w still in %+v", b.sys.Tree())
	}
	if _, again := b.spawnInstance(t, root, "w"); again == first {
		t.Errorf("spawned again as the old instance %d", first)
	}
}
