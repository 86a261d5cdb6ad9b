package developer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"buddi/plugins"
	"buddi/plugins/developer/runlist"
	"buddi/plugins/developer/spawn"
)

// withHost gives the plugin a host the test can clean up after.
func withHost(h *localHost) func(*Deps) {
	return func(d *Deps) { d.Processes = h }
}

func TestStartOutputStop(t *testing.T) {
	host := &localHost{}
	b := setup(t, withHost(host))
	t.Cleanup(func() { _ = host.StopAll(context.Background(), agent); _ = host.StopAll(context.Background(), "other") })
	b.setMode(t, runlist.ModeRun)

	start := func(name, command string) plugins.Call {
		return call("start", args(t, map[string]any{"name": name, "command": command}))
	}
	// sleep is not on the run list: a card, then it runs.
	web := start("web", "sleep 300")
	if got := b.tier(t, web); got != plugins.TierGated {
		t.Fatalf("start sleep: %s, want gated", got)
	}
	b.mustFail(t, web, nil, "needs the owner's approval")
	out := b.mustRun(t, web, b.mustDescribe(t, web))
	if !strings.Contains(out, "Started web") {
		t.Fatalf("start: %q", out)
	}
	var ident spawn.Identity
	var st int64
	if err := b.deps.Pool.QueryRow(context.Background(), `SELECT pid, start_time, boot FROM developer.processes WHERE name = 'web'`).Scan(&ident.Pid, &st, &ident.Boot); err != nil {
		t.Fatal(err)
	}
	ident.StartTime = uint64(st)
	if !spawn.Alive(ident) {
		t.Fatal("web is not running")
	}
	// A name belongs to one agent at a time.
	b.setWorkspace(t, "other", b.ws)
	otherCall := start("web", "sleep 300")
	otherCall.Agent = "other"
	b.mustFail(t, otherCall, b.mustDescribe(t, otherCall), "already runs")

	if got := b.tier(t, call("output", `{"name":"web"}`)); got != plugins.TierAuto {
		t.Errorf("output: %s, want auto", got)
	}
	if out := b.mustRun(t, call("output", `{"name":"web"}`), nil); !strings.Contains(out, "web is running") {
		t.Errorf("output: %q", out)
	}
	// At most MaxProcesses per agent.
	for i := 2; i <= MaxProcesses; i++ {
		c := start(fmt.Sprintf("p%d", i), "sleep 300")
		b.mustRun(t, c, b.mustDescribe(t, c))
	}
	extra := start("one-too-many", "sleep 300")
	b.mustFail(t, extra, b.mustDescribe(t, extra), "the most it may")

	b.mustRun(t, call("stop", `{"name":"web"}`), nil)
	if spawn.Alive(ident) {
		t.Error("web still runs after developer.stop")
	}
	b.mustFail(t, call("stop", `{"name":"web"}`), nil, "no running process")
	if out := b.mustRun(t, call("output", `{"name":"web"}`), nil); !strings.Contains(out, "web is exited") {
		t.Errorf("output after stop: %q", out)
	}
	// Changing the workspace stops the rest.
	if err := newPlugin(b.deps).stopAllProcesses(context.Background(), agent); err != nil {
		t.Fatal(err)
	}
	var live int
	_ = b.deps.Pool.QueryRow(context.Background(), `SELECT count(*) FROM developer.processes WHERE agent = $1 AND stopped_at IS NULL`, agent).Scan(&live)
	if live != 0 || len(host.procs[agent]) != 0 {
		t.Errorf("after the workspace changed: %d rows live, %d processes held", live, len(host.procs[agent]))
	}
}

// The owner's command line stops a process another process started, by its identity.
func TestStoreStopsProcesses(t *testing.T) {
	host := &localHost{}
	b := setup(t, withHost(host))
	t.Cleanup(func() { _ = host.StopAll(context.Background(), agent) })
	c := call("start", args(t, map[string]any{"name": "watch", "command": "sleep 300"}))
	b.mustRun(t, c, b.mustDescribe(t, c))
	list, err := b.store.Processes(context.Background(), agent)
	if err != nil || len(list) != 1 || !list[0].Running || list[0].Name != "watch" {
		t.Fatalf("processes = %+v, %v", list, err)
	}
	if err := b.store.StopProcess(context.Background(), agent, "watch"); err != nil {
		t.Fatal(err)
	}
	if spawn.Alive(list[0].ident) {
		t.Error("watch still runs")
	}
	if err := b.store.StopProcess(context.Background(), agent, "watch"); err == nil {
		t.Error("a second stop found the process again")
	}
	if list, _ := b.store.Processes(context.Background(), agent); len(list) != 0 {
		t.Errorf("after stop: %+v", list)
	}
}

// A process row written into the table, naming one of the owner's own processes (its pid and
// start time are anyone's to read in /proc), aims nothing: Stop finds no such process, the
// list does not show it, and the owner's process still runs. One developer.start wrote is
// sealed and stops.
func TestForgedProcessRowSignalsNothing(t *testing.T) {
	host := &localHost{}
	b := setup(t, withHost(host))
	t.Cleanup(func() { _ = host.StopAll(context.Background(), agent) })
	victim, err := spawn.Start(spawn.Spec{Argv: []string{"sleep", "300"}, Dir: b.ws, Env: []string{"PATH=/usr/bin:/bin"}, Unboxed: true},
		filepath.Join(b.data, "victim.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = victim.Stop(time.Second) })
	id := victim.Identity()
	if _, err := b.store.pool.Exec(context.Background(), `
		INSERT INTO developer.processes (agent, name, pid, start_time, boot, argv, cwd, port, log_path, started_at)
		VALUES ($1, 'editor', $2, $3, $4, '["sleep","300"]', $5, NULL, $6, now())`,
		agent, id.Pid, int64(id.StartTime), id.Boot, b.ws, filepath.Join(b.data, "victim.log")); err != nil {
		t.Fatal(err)
	}
	if err := b.store.StopProcess(context.Background(), agent, "editor"); !errors.Is(err, ErrNoProcess) {
		t.Errorf("stopping the forged row: %v, want ErrNoProcess", err)
	}
	if list, _ := b.store.Processes(context.Background(), agent); len(list) != 0 {
		t.Errorf("the forged row is listed: %+v", list)
	}
	if !spawn.Alive(id) {
		t.Fatal("a forged row had the owner's process stopped")
	}
	c := call("start", args(t, map[string]any{"name": "watch", "command": "sleep 300"}))
	b.mustRun(t, c, b.mustDescribe(t, c))
	if list, err := b.store.Processes(context.Background(), agent); err != nil || len(list) != 1 || list[0].Name != "watch" {
		t.Fatalf("the sealed row: %+v, %v", list, err)
	}
}
