package developer

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"buddi/actors"
	"buddi/core/events"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/plugins/developer/runlist"
	"buddi/plugins/developer/spawn"
	"buddi/supervisor"
	"buddi/supervisor/proc"
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

// treeHost is buddi serve's process host on an actor tree of its own, with a short backoff;
// the test's end stops the tree (and so every process it owns).
func treeHost(t *testing.T) (*supervisor.ProcessHost, *actors.System) {
	t.Helper()
	sys := actors.NewSystem(nil, nil)
	tree, err := supervisor.Build(sys, supervisor.Parts{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = sys.Shutdown(ctx)
	})
	return supervisor.NewProcessHost(sys, tree.Workspaces, supervisor.ProcessDeps{
		Budget: actors.Budget{MaxRestarts: 3, Within: time.Minute, Backoff: 10 * time.Millisecond}, Grace: time.Second}), sys
}

// row reads what the table says of agent's latest process name.
func (b *testBundle) row(t *testing.T, name string) (state string, pid, restarts int, note string, stopped bool) {
	t.Helper()
	if err := b.deps.Pool.QueryRow(context.Background(), `
		SELECT state, pid, restarts, note, stopped_at IS NOT NULL FROM developer.processes
		WHERE agent = $1 AND name = $2 ORDER BY id DESC LIMIT 1`, agent, name).Scan(&state, &pid, &restarts, &note, &stopped); err != nil {
		t.Fatal(err)
	}
	return
}

// Under buddi serve's host, a started process is its actor's: a crash starts it again in
// the same row (a new pid and one more restart), a crash loop is given up with one sentence
// that the row, the listing, developer.output and the event log carry, and a stop from the
// owner's command line is a stop, not a crash.
func TestStartedProcessIsSupervised(t *testing.T) {
	host, _ := treeHost(t)
	b := setup(t, func(d *Deps) { d.Processes = host })
	b.setMode(t, runlist.ModeRun)
	ctx := context.Background()
	start := func(name, command string) {
		t.Helper()
		c := call("start", args(t, map[string]any{"name": name, "command": command, "port": 4000}))
		b.mustRun(t, c, b.mustDescribe(t, c))
	}

	// Crashes once (exit 1), then runs.
	start("web", `sh -c "if [ -e crashed ]; then exec sleep 300; fi; touch crashed; exit 1"`)
	var firstPid int
	_, firstPid, _, _, _ = b.row(t, "web")
	pgtest.Eventually(t, "web started again", func() bool {
		state, pid, restarts, _, _ := b.row(t, "web")
		s, ok := host.Lookup("web")
		return state == stateRunning && restarts == 1 && pid != firstPid && ok && s.Pid == pid && s.State == proc.StateRunning && s.Port == 4000
	})
	list, err := b.store.Processes(ctx, agent)
	if err != nil || len(list) != 1 || !list[0].Running || list[0].Restarts != 1 {
		t.Fatalf("listing %+v %v: want web running, restarted once", list, err)
	}

	// Crashes every time: three restarts, then given up.
	start("bad", `sh -c "exit 7"`)
	pgtest.Eventually(t, "bad given up", func() bool { state, _, _, _, stopped := b.row(t, "bad"); return state == stateGaveUp && stopped })
	_, _, restarts, note, _ := b.row(t, "bad")
	if restarts != 3 || !strings.Contains(note, "bad kept crashing (last: exited with status 7)") {
		t.Errorf("the given-up row: %d restarts, note %q", restarts, note)
	}
	var sentence string
	if err := b.deps.Pool.QueryRow(ctx, `SELECT payload->>'sentence' FROM core.events WHERE kind = $1 AND payload->>'name' = 'bad'`, events.ProcessGaveUp).Scan(&sentence); err != nil || sentence != note {
		t.Errorf("event: %q %v, want the row's sentence", sentence, err)
	}
	list, _ = b.store.Processes(ctx, agent)
	var shown *Process
	for i := range list {
		if list[i].Name == "bad" {
			shown = &list[i]
		}
	}
	if shown == nil || shown.Running || shown.State != stateGaveUp || shown.Note != note {
		t.Errorf("listing %+v: want bad shown as given up, with its sentence", list)
	}
	if out := b.mustRun(t, call("output", `{"name":"bad"}`), nil); !strings.Contains(out, "kept crashing") {
		t.Errorf("output of a process given up: %q", out)
	}
	if _, ok := host.Lookup("bad"); ok {
		t.Error("a process given up is still in the host's record")
	}
	start("bad", "sleep 300") // the name is free again
	b.mustRun(t, call("stop", `{"name":"bad"}`), nil)

	// The owner's command line stops web from outside the host: its actor leaves, and nothing
	// starts it again.
	if err := b.store.StopProcess(ctx, agent, "web"); err != nil {
		t.Fatal(err)
	}
	pgtest.Eventually(t, "web's actor gone", func() bool { _, ok := host.Lookup("web"); return !ok })
	if state, _, restarts, _, _ := b.row(t, "web"); state != stateStopped || restarts != 1 {
		t.Errorf("web after the owner's stop: %s, %d restarts; want stopped, not started again", state, restarts)
	}
}

// survive starts a process as a killed buddi leaves it: not this test's child (its parent
// has exited), leading a session and group of its own, and returns its identity.
func survive(t *testing.T) spawn.Identity {
	t.Helper()
	out, err := exec.Command("sh", "-c", "setsid sleep 300 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	var id spawn.Identity
	pgtest.Eventually(t, "the survivor leads its group", func() bool {
		id, err = spawn.Lookup(pid)
		return err == nil && processGroupOf(pid) == pid
	})
	t.Cleanup(func() { _ = spawn.Stop(id, time.Second) })
	return id
}

func processGroupOf(pid int) int {
	g, err := unix.Getpgid(pid)
	if err != nil {
		return -1
	}
	return g
}

// record writes the row a buddi writes at developer.start for id, sealed.
func (b *testBundle) record(t *testing.T, name string, id spawn.Identity) {
	t.Helper()
	argv, logPath := []string{"sleep", "300"}, filepath.Join(b.data, "developer", "logs", agent+"."+name+".log")
	sum, err := b.store.sealProcess(agent, name, id, argv, b.ws, nil, logPath, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.deps.Pool.Exec(context.Background(), `
		INSERT INTO developer.processes (agent, name, pid, start_time, boot, argv, cwd, log_path, started_at, seal)
		VALUES ($1, $2, $3, $4, $5, '["sleep","300"]', $6, $7, $8, $9)`,
		agent, name, id.Pid, int64(id.StartTime), id.Boot, b.ws, logPath, testNow, sum); err != nil {
		t.Fatal(err)
	}
}

// A process that outlived a killed buddi is listed as running with its old pid. At the next
// start it gets an actor, so a stop (here buddi's own, the tree's shutdown) stops it, and its
// own end is recorded; a row whose process is gone is recorded as stopped, and one whose pid
// now belongs to another process (another start time) is never signalled.
func TestSurvivorsOfAKilledBuddiAreAdopted(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	web, watch, stranger := survive(t), survive(t), survive(t)
	b.record(t, "web", web)
	b.record(t, "watch", watch)
	recycled := stranger
	recycled.StartTime-- // the row's process started earlier: the pid is someone else's now
	b.record(t, "recycled", recycled)
	gone := survive(t)
	if err := spawn.Stop(gone, time.Second); err != nil {
		t.Fatal(err)
	}
	b.record(t, "gone", gone)

	list, err := b.store.Processes(ctx, agent)
	if err != nil {
		t.Fatal(err)
	}
	running := map[string]bool{}
	for _, p := range list {
		running[p.Name] = p.Running
	}
	if !running["web"] || !running["watch"] || running["recycled"] || running["gone"] {
		t.Fatalf("before adoption: %v", running)
	}

	host, sys := treeHost(t)
	n, err := b.store.AdoptSurvivors(ctx, host)
	if err != nil || n != 2 {
		t.Fatalf("adopted %d, %v: want web and watch", n, err)
	}
	if s, ok := host.Lookup("web"); !ok || s.Pid != web.Pid {
		t.Errorf("web in the host's record: %+v %v", s, ok)
	}
	for _, name := range []string{"recycled", "gone"} {
		if state, _, _, note, stopped := b.row(t, name); state != stateStopped || !stopped || !strings.Contains(note, "no longer running") {
			t.Errorf("%s: %s (%q), want stopped", name, state, note)
		}
	}
	if !spawn.Alive(stranger) {
		t.Fatal("the process behind a recycled pid was signalled")
	}

	// watch ends by itself: its actor hears of it through the pidfd and records it.
	if err := unix.Kill(watch.Pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	pgtest.Eventually(t, "watch recorded as exited", func() bool { state, _, _, _, _ := b.row(t, "watch"); return state == stateExited })
	if _, ok := host.Lookup("watch"); ok {
		t.Error("watch is still in the host's record")
	}

	// A clean stop of buddi stops what it adopted.
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := sys.Shutdown(stopCtx); err != nil {
		t.Fatal(err)
	}
	if spawn.Alive(web) {
		t.Error("an adopted process outlived buddi's stop")
	}
	if !spawn.Alive(stranger) {
		t.Error("buddi's stop signalled the process behind a recycled pid")
	}
}
