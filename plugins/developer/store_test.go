package developer

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"buddi/core/seal/sealtest"
	"buddi/plugins/developer/runlist"
)

// TestStoreRemembered: remembered commands are bound to the agent and the directory,
// listed, said twice as once, and revocable.
func TestStoreRemembered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	s := b.store
	npm := runlist.Remembered{Agent: agent, Workspace: b.ws, Argv: []string{"npm", "install"}, Prefix: true}
	first, err := s.Remember(ctx, npm)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Remember(ctx, npm)
	if err != nil || again.ID != first.ID {
		t.Errorf("said twice: got id %d, %v; want %d", again.ID, err, first.ID)
	}
	exact, err := s.Remember(ctx, runlist.Remembered{Agent: agent, Workspace: b.ws, Argv: []string{"make", "deploy"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Remember(ctx, runlist.Remembered{Agent: "other", Workspace: b.ws, Argv: []string{"ls"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Remember(ctx, runlist.Remembered{Agent: agent, Workspace: "/elsewhere", Argv: []string{"ls"}}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []runlist.Remembered{
		{Agent: "", Workspace: b.ws, Argv: []string{"ls"}},
		{Agent: agent, Workspace: "relative", Argv: []string{"ls"}},
		{Agent: agent, Workspace: b.ws},
	} {
		if _, err := s.Remember(ctx, bad); err == nil {
			t.Errorf("Remember(%+v) accepted", bad)
		}
	}

	all, err := s.ListRemembered(ctx, "")
	if err != nil || len(all) != 4 {
		t.Fatalf("got %d, %v; want 4", len(all), err)
	}
	mine, err := s.RememberedFor(ctx, agent, b.ws)
	if err != nil || len(mine) != 2 {
		t.Fatalf("got %+v, %v", mine, err)
	}
	if !mine[0].Matches(agent, b.ws, []string{"npm", "install", "left-pad"}) || mine[0].Matches("other", b.ws, []string{"npm", "install"}) {
		t.Errorf("the prefix is not bound as it should be: %+v", mine[0])
	}
	if !slices.Equal(mine[1].Argv, []string{"make", "deploy"}) || mine[1].Prefix {
		t.Errorf("got %+v", mine[1])
	}

	if err := s.Forget(ctx, exact.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Forget(ctx, exact.ID); !errors.Is(err, ErrNotRemembered) {
		t.Errorf("forgot twice: got %v", err)
	}
	if err := s.Forget(ctx, 987654); !errors.Is(err, ErrNotRemembered) {
		t.Errorf("forgot a stranger: got %v", err)
	}
	mine, _ = s.RememberedFor(ctx, agent, b.ws)
	if len(mine) != 1 || mine[0].Argv[0] != "npm" {
		t.Errorf("after Forget: got %+v", mine)
	}
	// Forgotten and said again: a new row.
	back, err := s.Remember(ctx, runlist.Remembered{Agent: agent, Workspace: b.ws, Argv: []string{"make", "deploy"}})
	if err != nil || back.ID == exact.ID {
		t.Errorf("got %d, %v; want a new row", back.ID, err)
	}
}

// TestStoreWorkspaces: one workspace per agent, replaced by a new one, listed by agent.
func TestStoreWorkspaces(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if _, err := b.store.SetWorkspace(ctx, agent, "relative", "owner:test", ""); err == nil {
		t.Error("a relative directory was accepted")
	}
	if _, err := b.store.SetWorkspace(ctx, agent, b.ws+"/../ws", "owner:test", ""); err == nil {
		t.Error("an unclean directory was accepted")
	}
	b.setWorkspace(t, "alpha", b.home)
	b.setWorkspace(t, agent, b.data)
	list, err := b.store.Workspaces(ctx)
	if err != nil || len(list) != 2 || list[0].Agent != "alpha" || list[1].Directory != b.data {
		t.Errorf("got %+v, %v", list, err)
	}
	if _, ok, err := b.store.Workspace(ctx, "nobody"); ok || err != nil {
		t.Errorf("nobody: got %v, %v", ok, err)
	}
}

// TestStoreWithoutDatabase: a plugin built without a pool refuses rather than panics.
func TestStoreWithoutDatabase(t *testing.T) {
	t.Parallel()
	s := NewStore(nil, sealtest.Key(t), nil)
	if _, _, err := s.Workspace(context.Background(), agent); !errors.Is(err, errNoDatabase) {
		t.Errorf("got %v", err)
	}
	if _, err := s.Mode(context.Background(), agent); !errors.Is(err, errNoDatabase) {
		t.Errorf("got %v", err)
	}
}

// The workspace keeps the PATH captured when it was set, and the git found on it (§11).
func TestWorkspaceCapturesTheEnvironment(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if _, err := b.store.SetWorkspace(ctx, agent, b.ws, "owner:test", "/usr/local/bin:/usr/bin:/bin"); err != nil {
		t.Fatal(err)
	}
	w, ok, err := b.store.Workspace(ctx, agent)
	if err != nil || !ok || w.Path != "/usr/local/bin:/usr/bin:/bin" || !strings.HasSuffix(w.Git, "/git") {
		t.Errorf("workspace = %+v, %v, %v: want the PATH and its git", w, ok, err)
	}
	// A command resolves on that PATH: one without the program fails to start it.
	if _, err := b.store.SetWorkspace(ctx, agent, b.ws, "owner:test", "/nonexistent"); err != nil {
		t.Fatal(err)
	}
	b.mustFail(t, call("run", args(t, map[string]any{"command": "echo hi"})), nil, "could not be started")
}
