package actors_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"buddi/actors"
	"buddi/actors/actorstest"
)

// A child spawned from outside is spawned by its parent (which then
// supervises it); spawns need a live supervisor as parent.
func TestSpawnThroughParent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	root := b.supervisor(t, nil, "root", generous)
	sub := b.supervisor(t, root, "sub", generous)
	w := b.spawn(t, sub, "w")
	if w.Path() != "root/sub/w" {
		t.Errorf("got path %q, want root/sub/w", w.Path())
	}
	if n := b.node(t, "root/sub/w"); n.Parent != "root/sub" {
		t.Errorf("got parent %q, want root/sub", n.Parent)
	}

	b.sys.Send(w, actorstest.Crash{Reason: "boom"})
	if ev := b.nextEvent(t); ev.Supervisor != "root/sub" || ev.Child != "root/sub/w" {
		t.Errorf("got %+v, want root/sub deciding for root/sub/w", ev)
	}

	t.Run("concurrently", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				if _, err := b.sys.Spawn(sub, fmt.Sprintf("c%d", i), b.probe.Produce); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got := len(b.sys.Tree()); got != 3+20 {
			t.Errorf("got %d nodes, want 23", got)
		}
	})
	t.Run("no parent", func(t *testing.T) {
		if _, err := b.sys.Spawn(nil, "x", b.probe.Produce); err == nil {
			t.Error("Spawn without a parent: no error")
		}
	})
	t.Run("parent is a worker", func(t *testing.T) {
		_, err := b.sys.Spawn(w, "x", b.probe.Produce)
		if err == nil || !strings.Contains(err.Error(), "not a supervisor") {
			t.Errorf("got %v, want an error saying root/sub/w is not a supervisor", err)
		}
	})
	t.Run("parent stopped", func(t *testing.T) {
		gone := b.supervisor(t, root, "gone", generous)
		if err := b.sys.Stop(context.Background(), gone); err != nil {
			t.Fatal(err)
		}
		if _, err := b.sys.Spawn(gone, "x", b.probe.Produce); !errors.Is(err, actors.ErrNotRunning) {
			t.Errorf("got %v, want ErrNotRunning", err)
		}
	})
}

// Names are unique among siblings and limited to a safe alphabet.
func TestNames(t *testing.T) {
	t.Parallel()
	b := setup(t)
	root := b.supervisor(t, nil, "root", generous)
	b.supervisor(t, root, "sub", generous)
	b.spawn(t, root, "w")
	b.spawn(t, root, "ok.name_2-b")

	taken := []struct {
		name  string
		spawn func() error
		path  string
	}{
		{"supervisor named like a worker", func() error { _, err := b.sys.NewSupervisor(root, "w", generous); return err }, "root/w"},
		{"top level", func() error { _, err := b.sys.NewSupervisor(nil, "root", generous); return err }, "root"},
		{"worker", func() error { _, err := b.sys.Spawn(root, "w", b.probe.Produce); return err }, "root/w"},
		{"worker named like a supervisor", func() error { _, err := b.sys.Spawn(root, "sub", b.probe.Produce); return err }, "root/sub"},
	}
	for _, tt := range taken {
		err := tt.spawn()
		var nt *actors.NameTakenError
		if !errors.As(err, &nt) || nt.Path != tt.path || !strings.Contains(err.Error(), tt.path) {
			t.Errorf("%s: got %v, want the name taken at %s", tt.name, err, tt.path)
		}
	}

	invalid := []string{"", "a/b", "a$1", "sp ace", "ü"}
	for _, name := range invalid {
		if _, err := b.sys.Spawn(root, name, b.probe.Produce); err == nil {
			t.Errorf("Spawn(%q): no error", name)
		}
		if _, err := b.sys.NewSupervisor(nil, name, generous); err == nil {
			t.Errorf("NewSupervisor(nil, %q): no error", name)
		}
	}
	if _, err := b.sys.NewSupervisor(nil, "deadletter", generous); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("NewSupervisor(nil, deadletter): got %v, want reserved", err)
	}
}

// Tree lists parents before children, siblings in spawn order.
func TestTree(t *testing.T) {
	t.Parallel()
	b := setup(t)
	root := b.supervisor(t, nil, "root", actors.Strategy{Budget: actors.Budget{MaxRestarts: 3, Within: 60e9}})
	sup := b.supervisor(t, root, "sup", actors.Strategy{Kind: actors.AllForOne, Budget: actors.Budget{MaxRestarts: 1, Within: 10e9}})
	b.spawn(t, root, "w")
	b.spawn(t, sup, "x")
	b.supervisor(t, nil, "other", actors.Strategy{})

	want := []actors.Node{
		{Path: "root", Supervisor: true, Strategy: "one-for-one, 3 restarts in 1m0s, then stop and escalate", State: "running"},
		{Path: "root/sup", Parent: "root", Supervisor: true, Strategy: "all-for-one, 1 restart in 10s, then stop and escalate", State: "running"},
		{Path: "root/sup/x", Parent: "root/sup", State: "running"},
		{Path: "root/w", Parent: "root", State: "running"},
		{Path: "other", Supervisor: true, Strategy: "one-for-one, no restarts, then stop and escalate", State: "running"},
	}
	got := b.sys.Tree()
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("node %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}
