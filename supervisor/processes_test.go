package supervisor_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"buddi/actors"
	"buddi/actors/actorstest"
	"buddi/plugins/developer/spawn"
	"buddi/supervisor"
)

// start spawns a real long-lived process (sleep) the way the developer plugin does.
func start(t *testing.T, name string) *spawn.Process {
	t.Helper()
	p, err := spawn.Start(spawn.Spec{Argv: []string{"sleep", "300"}, Dir: t.TempDir(), Env: []string{"PATH=/usr/bin:/bin"}, Unboxed: true}, // the tree, not the box, is under test
		filepath.Join(t.TempDir(), name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(time.Second) })
	return p
}

// Processes are actors under their workspace: stopping one, a workspace, or the whole tree
// (buddi stopping) leaves no process behind.
func TestProcessesAreActorsUnderTheirWorkspace(t *testing.T) {
	t.Parallel()
	events := actorstest.NewEvents()
	sys := actors.NewSystem(nil, events.Sink)
	tree, err := supervisor.Build(sys, supervisor.Parts{})
	if err != nil {
		t.Fatal(err)
	}
	host := supervisor.NewProcessHost(sys, tree)
	ctx := context.Background()

	web, watch, other := start(t, "web"), start(t, "watch"), start(t, "other")
	for _, a := range []struct {
		ws, name string
		p        *spawn.Process
	}{{"developer", "web", web}, {"developer", "watch", watch}, {"scout", "other", other}} {
		if err := host.Adopt(ctx, a.ws, a.name, a.p); err != nil {
			t.Fatal(err)
		}
	}
	if err := host.Adopt(ctx, "developer", "web", web); err == nil {
		t.Error("a second process named web in one workspace was adopted")
	}
	paths := map[string]bool{}
	for _, n := range sys.Tree() {
		paths[n.Path] = true
	}
	if !paths["root/workspaces/developer/web"] || !paths["root/workspaces/scout/other"] {
		t.Fatalf("tree = %v: want the processes under their workspaces", sys.Tree())
	}

	if err := host.Stop(ctx, "developer", "web"); err != nil {
		t.Fatal(err)
	}
	if spawn.Alive(web.Identity()) {
		t.Error("web still runs after Stop")
	}
	if got := host.Running("developer"); !slices.Equal(got, []string{"watch"}) {
		t.Errorf("running = %v, want [watch]", got)
	}
	if err := host.StopAll(ctx, "developer"); err != nil {
		t.Fatal(err)
	}
	if spawn.Alive(watch.Identity()) {
		t.Error("watch still runs after its workspace stopped")
	}

	shutdownCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := sys.Shutdown(shutdownCtx); err != nil {
		t.Fatal(err)
	}
	if spawn.Alive(other.Identity()) {
		t.Error("a process outlived the tree's shutdown")
	}
}
