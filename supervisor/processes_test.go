package supervisor_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"buddi/actors"
	"buddi/actors/actorstest"
	"buddi/plugins/developer/spawn"
	"buddi/supervisor"
	"buddi/supervisor/proc"
)

// process is a spawn.Process as the host sees it.
type process struct{ *spawn.Process }

func (p process) Pid() int { return p.Identity().Pid }

func (p process) Exit() error {
	if e := p.Process.Exit(); e.Code != 0 || e.Signal != 0 {
		return fmt.Errorf("exited with status %d", e.Code)
	}
	return nil
}

// spawnIn spawns a real process the way the developer plugin does, in dir: argv defaults to
// a long-lived sleep. It may run on an actor's goroutine, so it fails with an error.
func spawnIn(dir string, argv ...string) (process, error) {
	if len(argv) == 0 {
		argv = []string{"sleep", "300"}
	}
	p, err := spawn.Start(spawn.Spec{Argv: argv, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}, Unboxed: true}, // the tree, not the box, is under test
		filepath.Join(dir, "out.log"))
	if err != nil {
		return process{}, err
	}
	return process{p}, nil
}

// bundle is a tree with a process host, and what its sink heard.
type bundle struct {
	dir    string
	sys    *actors.System
	tree   *supervisor.Tree
	host   *supervisor.ProcessHost
	events *actorstest.Events

	mu      sync.Mutex
	started []process
}

func setup(t *testing.T, budget actors.Budget) *bundle {
	t.Helper()
	events := actorstest.NewEvents()
	sys := actors.NewSystem(nil, events.Sink)
	tree, err := supervisor.Build(sys, supervisor.Parts{})
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{dir: t.TempDir(), sys: sys, tree: tree, events: events, host: supervisor.NewProcessHost(sys, tree.Workspaces, supervisor.ProcessDeps{Budget: budget, Grace: time.Second})}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = sys.Shutdown(ctx) // stops every process an actor owns
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, p := range b.started {
			_ = p.Stop(time.Second)
		}
	})
	return b
}

// start spawns a process for the test; the test's end stops it after the tree.
func (b *bundle) start(t *testing.T, argv ...string) process {
	t.Helper()
	p, err := b.spawn(argv...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// spawn is start for an actor's goroutine.
func (b *bundle) spawn(argv ...string) (process, error) {
	p, err := spawnIn(b.dir, argv...)
	if err == nil {
		b.mu.Lock()
		b.started = append(b.started, p)
		b.mu.Unlock()
	}
	return p, err
}

func (b *bundle) node(path string) (actors.Node, bool) {
	for _, n := range b.sys.Tree() {
		if n.Path == path {
			return n, true
		}
	}
	return actors.Node{}, false
}

// journal collects a process's recorded events.
type journal struct {
	mu     sync.Mutex
	events []proc.Event
}

func (j *journal) record(_ context.Context, ev proc.Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, ev)
}

func (j *journal) kinds() []proc.EventKind {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []proc.EventKind
	for _, ev := range j.events {
		out = append(out, ev.Kind)
	}
	return out
}

func (j *journal) last() proc.Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.events) == 0 {
		return proc.Event{}
	}
	return j.events[len(j.events)-1]
}

// Processes are actors under their workspace: stopping one, a workspace, or the whole tree
// (buddi stopping) leaves no process behind, and the host's record follows.
func TestProcessesAreActorsUnderTheirWorkspace(t *testing.T) {
	t.Parallel()
	b := setup(t, actors.Budget{})
	ctx := context.Background()

	web, watch, other := b.start(t), b.start(t), b.start(t)
	for _, a := range []struct {
		ws, name string
		p        process
	}{{"developer", "web", web}, {"developer", "watch", watch}, {"scout", "other", other}} {
		if err := b.host.Adopt(ctx, proc.Spec{Workspace: a.ws, Name: a.name, First: a.p, Port: 5173}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.host.Adopt(ctx, proc.Spec{Workspace: "scout", Name: "web", First: b.start(t)}); err == nil {
		t.Error("a second process named web was adopted")
	}
	if _, ok := b.node("root/workspaces/developer/web"); !ok {
		t.Fatalf("tree = %v: want the processes under their workspaces", b.sys.Tree())
	}
	if _, ok := b.node("root/workspaces/scout/other"); !ok {
		t.Fatalf("tree = %v: want the processes under their workspaces", b.sys.Tree())
	}
	if s, ok := b.host.Lookup("web"); !ok || s.Pid != web.Pid() || s.Port != 5173 || s.State != proc.StateRunning {
		t.Errorf("lookup web = %+v %v, want it running with its pid and port", s, ok)
	}

	if err := b.host.Stop(ctx, "developer", "web"); err != nil {
		t.Fatal(err)
	}
	if spawn.Alive(web.Identity()) {
		t.Error("web still runs after Stop")
	}
	if _, ok := b.host.Lookup("web"); ok {
		t.Error("web is still in the record after Stop")
	}
	var names []string
	for _, s := range b.host.List("developer") {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"watch"}) {
		t.Errorf("listed %v, want [watch]", names)
	}
	if err := b.host.Stop(ctx, "developer", "web"); err == nil {
		t.Error("a second stop of web succeeded")
	}
	if err := b.host.StopAll(ctx, "developer"); err != nil {
		t.Fatal(err)
	}
	if spawn.Alive(watch.Identity()) {
		t.Error("watch still runs after its workspace stopped")
	}

	shutdownCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := b.sys.Shutdown(shutdownCtx); err != nil {
		t.Fatal(err)
	}
	if spawn.Alive(other.Identity()) {
		t.Error("a process outlived the tree's shutdown")
	}
}

// A process that keeps crashing is started again by its workspace, each time after a longer
// backoff, until the budget is spent; then it is stopped and given up with one sentence, and
// nothing escalates past the workspace (buddi lives on).
func TestCrashLoopIsRestartedWithBackoffThenGivenUp(t *testing.T) {
	t.Parallel()
	backoff := 20 * time.Millisecond
	b := setup(t, actors.Budget{MaxRestarts: 3, Within: time.Minute, Backoff: backoff})
	var j journal
	var starts atomic.Int32
	var at []time.Time
	var atMu sync.Mutex
	crash := func() (process, error) {
		atMu.Lock()
		at = append(at, time.Now())
		atMu.Unlock()
		return b.spawn("sh", "-c", "exit 3")
	}
	first, err := crash()
	if err != nil {
		t.Fatal(err)
	}
	spec := proc.Spec{Workspace: "developer", Name: "web", First: first, Record: j.record,
		Start: func(context.Context) (proc.Proc, error) { starts.Add(1); return crash() }}
	if err := b.host.Adopt(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	actorstest.Eventually(t, "web given up", func() bool { return j.last().Kind == proc.GaveUp })
	if got, want := j.kinds(), []proc.EventKind{proc.Crashed, proc.Crashed, proc.Crashed, proc.Crashed, proc.GaveUp}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	if n := starts.Load(); n != 3 {
		t.Errorf("started again %d times, want 3", n)
	}
	last := j.last()
	if last.Restarts != 3 || !strings.Contains(last.Sentence, "web kept crashing (last: exited with status 3)") || strings.Count(last.Sentence, ". ") > 0 {
		t.Errorf("gave up with %+v: want one sentence with the last crash and 3 restarts", last)
	}
	atMu.Lock()
	for i := 1; i < len(at); i++ {
		if gap, want := at[i].Sub(at[i-1]), backoff<<(i-1); gap < want {
			t.Errorf("restart %d came %v after the crash before it, want at least %v (the backoff doubles)", i, gap, want)
		}
	}
	atMu.Unlock()
	if _, ok := b.host.Lookup("web"); ok {
		t.Error("a process given up is still in the record")
	}
	actorstest.Eventually(t, "web's actor gone", func() bool { _, ok := b.node("root/workspaces/developer/web"); return !ok })
	if n, ok := b.node("root/workspaces/developer"); !ok || n.State != actors.StateRunning || n.Restarts != 0 {
		t.Errorf("workspace node %+v %v: want it running, never restarted", n, ok)
	}
	if n, _ := b.node("root/workspaces"); n.Restarts != 0 {
		t.Errorf("root/workspaces restarted %d times: the crash loop escalated", n.Restarts)
	}
	select {
	case ev := <-b.sys.Escalations():
		t.Fatalf("escalation %+v: a crash loop must stay inside its workspace", ev)
	default:
	}
	// The name is free again.
	if err := b.host.Adopt(context.Background(), proc.Spec{Workspace: "developer", Name: "web", First: b.start(t)}); err != nil {
		t.Fatalf("adopt web again after it was given up: %v", err)
	}
}

// A crash within the budget is followed by a new process, which the record shows; a clean
// exit is not a crash: the actor leaves the tree and the end is recorded.
func TestCrashRestartsAndCleanExitLeaves(t *testing.T) {
	t.Parallel()
	b := setup(t, actors.Budget{MaxRestarts: 3, Within: time.Minute, Backoff: time.Millisecond})
	var j journal
	var again atomic.Pointer[process]
	spec := proc.Spec{Workspace: "developer", Name: "web", Port: 3000, First: b.start(t, "sh", "-c", "exit 1"), Record: j.record,
		Start: func(context.Context) (proc.Proc, error) { p, err := b.spawn(); again.Store(&p); return p, err }}
	if err := b.host.Adopt(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	actorstest.Eventually(t, "web running again", func() bool {
		s, ok := b.host.Lookup("web")
		p := again.Load()
		return ok && p != nil && s.State == proc.StateRunning && s.Pid == p.Pid() && s.Restarts == 1
	})
	if s, _ := b.host.Lookup("web"); s.Reason != "exited with status 1" || s.Port != 3000 {
		t.Errorf("status %+v: want the crash's reason and the port", s)
	}
	if got := j.kinds(); !slices.Equal(got, []proc.EventKind{proc.Crashed}) {
		t.Errorf("events %v, want one crash", got)
	}

	var j2 journal
	if err := b.host.Adopt(context.Background(), proc.Spec{Workspace: "developer", Name: "once", First: b.start(t, "true"), Record: j2.record,
		Start: func(context.Context) (proc.Proc, error) { t.Error("a clean exit was started again"); return b.spawn() }}); err != nil {
		t.Fatal(err)
	}
	actorstest.Eventually(t, "once recorded as exited", func() bool { return j2.last().Kind == proc.Exited })
	actorstest.Eventually(t, "once's actor gone", func() bool { _, ok := b.node("root/workspaces/developer/once"); return !ok })
	if _, ok := b.host.Lookup("once"); ok {
		t.Error("an exited process is still in the record")
	}
}

// A process stopped by someone else and recorded so (the owner's command line) ends its
// actor quietly; one that cannot be started again (found running at buddi's start) is not
// restarted when it ends, whatever its end.
func TestStoppedElsewhereAndNotRestartable(t *testing.T) {
	t.Parallel()
	b := setup(t, actors.Budget{MaxRestarts: 3, Within: time.Minute})
	var j journal
	stopped := stoppedProc{b.start(t, "sh", "-c", "exit 143")}
	if err := b.host.Adopt(context.Background(), proc.Spec{Workspace: "developer", Name: "web", First: stopped, Record: j.record,
		Start: func(context.Context) (proc.Proc, error) {
			t.Error("a stopped process was started again")
			return b.spawn()
		}}); err != nil {
		t.Fatal(err)
	}
	actorstest.Eventually(t, "web's actor gone", func() bool { _, ok := b.node("root/workspaces/developer/web"); return !ok })
	if got := j.kinds(); len(got) != 0 {
		t.Errorf("events %v for a stop recorded elsewhere, want none", got)
	}

	var j2 journal
	if err := b.host.Adopt(context.Background(), proc.Spec{Workspace: "developer", Name: "found", First: b.start(t, "sh", "-c", "exit 2"), Record: j2.record}); err != nil {
		t.Fatal(err)
	}
	actorstest.Eventually(t, "found recorded as exited", func() bool { return j2.last().Kind == proc.Exited })
	if got := j2.kinds(); !slices.Equal(got, []proc.EventKind{proc.Exited}) || !strings.Contains(j2.last().Sentence, "exited with status 2") {
		t.Errorf("events %v (%q), want one exit with its reason", got, j2.last().Sentence)
	}
	select {
	case ev := <-b.sys.Escalations():
		t.Fatalf("escalation %+v", ev)
	default:
	}
}

// stoppedProc is a process whose row says someone stopped it.
type stoppedProc struct{ process }

func (stoppedProc) Exit() error { return proc.ErrStopped }
