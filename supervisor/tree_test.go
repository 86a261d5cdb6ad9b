package supervisor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"buddi/actors"
	"buddi/actors/actorstest"
	"buddi/supervisor"
)

func newTree(t *testing.T) (*actors.System, *supervisor.Tree, *actorstest.Events) {
	t.Helper()
	events := actorstest.NewEvents()
	sys := actors.NewSystem(nil, events.Sink)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	tree, err := supervisor.Build(sys, supervisor.Parts{})
	if err != nil {
		t.Fatal(err)
	}
	return sys, tree, events
}

func node(sys *actors.System, path string) (actors.Node, bool) {
	for _, n := range sys.Tree() {
		if n.Path == path {
			return n, true
		}
	}
	return actors.Node{}, false
}

func TestTreeShapeAndStatedStrategies(t *testing.T) {
	t.Parallel()
	sys, _, _ := newTree(t)
	want := map[string]string{
		"root":               supervisor.RootStrategy.String(),
		"root/surfaces":      supervisor.SurfacesStrategy.String(),
		"root/conversations": supervisor.ConversationsStrategy.String(),
		"root/workspaces":    supervisor.WorkspacesStrategy.String(),
		"root/sentinels":     supervisor.SentinelsStrategy.String(),
	}
	for path, strategy := range want {
		n, ok := node(sys, path)
		if !ok {
			t.Errorf("%s missing", path)
			continue
		}
		if !n.Supervisor || n.Strategy != strategy {
			t.Errorf("%s = %+v, want a supervisor with %q", path, n, strategy)
		}
	}
	// One conversation that keeps failing is contained; anything else escalates.
	if s := supervisor.ConversationsStrategy.String(); !strings.Contains(s, "tell the parent") {
		t.Errorf("conversations: %q, want its failures contained", s)
	}
	if s := supervisor.RootStrategy.String(); !strings.Contains(s, "escalate") || !strings.Contains(s, "backoff") {
		t.Errorf("root: %q, want restarts with backoff, then escalation", s)
	}
}

// Start adds the queue last: when it starts, every actor a job can reach is already there.
func TestQueueStartsLast(t *testing.T) {
	t.Parallel()
	sys, tree, _ := newTree(t)
	seen := make(chan []string, 1)
	probe := actorstest.NewProbe()
	err := tree.Start(supervisor.Services{
		Dashboard: probe.Produce,
		Sentinels: []actors.Child{{Name: "disk", Produce: probe.Produce}},
		Queue: actors.Go("queue", func(ctx context.Context) error {
			var paths []string
			for _, n := range sys.Tree() {
				paths = append(paths, n.Path)
			}
			seen <- paths
			<-ctx.Done()
			return nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case paths := <-seen:
		got := strings.Join(paths, " ")
		for _, want := range []string{"root/surfaces/dashboard", "root/sentinels/disk", "root/conversations"} {
			if !strings.Contains(got, want) {
				t.Errorf("when the queue started the tree was %s: no %s", got, want)
			}
		}
	case <-time.After(actorstest.Timeout):
		t.Fatal("the queue never started")
	}
}

// A workspace process that panics is restarted by the workspaces supervisor, and the decision
// is reported.
func TestPanickingChildIsRestarted(t *testing.T) {
	t.Parallel()
	sys, tree, events := newTree(t)
	probe := actorstest.NewProbe()
	child, err := sys.Spawn(tree.Workspaces, "ws1", probe.Produce)
	if err != nil {
		t.Fatal(err)
	}
	probe.WaitFor(t, child.Path(), actors.Started{})
	sys.Send(child, actorstest.Crash{Reason: "boom"})

	ev := events.Next(t)
	if ev.Kind != actors.EventRestarted || ev.Child != "root/workspaces/ws1" || ev.Supervisor != "root/workspaces" || !strings.Contains(ev.Reason, "boom") || ev.Escalated {
		t.Fatalf("event = %+v, want a restart of root/workspaces/ws1 for boom", ev)
	}
	probe.WaitFor(t, child.Path(), actors.Started{})
	actorstest.Eventually(t, "restart counted", func() bool {
		n, _ := node(sys, "root/workspaces/ws1")
		return n.Restarts == 1 && n.State == "running"
	})
	if got, err := sys.Request(context.Background(), child, actorstest.Echo{Value: "still here"}); err != nil || got != "still here" {
		t.Errorf("after restart: %v, %v", got, err)
	}
}

// Past its budget the child is stopped and the failure escalates: root restarts the whole
// workspaces subtree.
func TestExhaustedBudgetEscalates(t *testing.T) {
	t.Parallel()
	sys, tree, events := newTree(t)
	probe := actorstest.NewProbe()
	child, err := sys.Spawn(tree.Workspaces, "ws1", probe.Produce)
	if err != nil {
		t.Fatal(err)
	}
	budget := supervisor.WorkspacesStrategy.Budget.MaxRestarts
	for i := 0; i < budget; i++ {
		probe.WaitFor(t, child.Path(), actors.Started{})
		sys.Send(child, actorstest.Crash{Reason: "again"})
		if ev := events.Next(t); ev.Kind != actors.EventRestarted {
			t.Fatalf("failure %d: event %+v, want a restart", i+1, ev)
		}
	}
	probe.WaitFor(t, child.Path(), actors.Started{})
	sys.Send(child, actorstest.Crash{Reason: "once too often"})

	stopped := events.Next(t)
	if stopped.Kind != actors.EventStopped || stopped.Child != "root/workspaces/ws1" || !stopped.Escalated {
		t.Fatalf("event = %+v, want ws1 stopped and escalated", stopped)
	}
	up := events.Next(t)
	if up.Kind != actors.EventRestarted || up.Supervisor != "root" || up.Child != "root/workspaces" {
		t.Fatalf("event = %+v, want root restarting root/workspaces", up)
	}
	actorstest.Eventually(t, "workspaces restarted by root", func() bool {
		n, _ := node(sys, "root/workspaces")
		return n.Restarts == 1 && n.State == "running"
	})
	select {
	case ev := <-sys.Escalations():
		t.Errorf("escalation left the root: %+v", ev)
	default:
	}
}

// When root's own budget is spent the failure leaves the tree: the process is told to stop.
func TestRootEscalationLeavesTheTree(t *testing.T) {
	t.Parallel()
	sys, tree, events := newTree(t)
	probe := actorstest.NewProbe()
	childBudget := supervisor.WorkspacesStrategy.Budget.MaxRestarts
	rootBudget := supervisor.RootStrategy.Budget.MaxRestarts
	for round := 0; round <= rootBudget; round++ {
		// After root restarts the subtree, a fresh child stands for the workspace process.
		child, err := sys.Spawn(tree.Workspaces, "ws"+string(rune('a'+round)), probe.Produce)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for i := 0; i <= childBudget; i++ {
			probe.WaitFor(t, child.Path(), actors.Started{})
			sys.Send(child, actorstest.Crash{Reason: "fault"})
		}
		// Read the decisions until root has answered this round.
		for {
			ev := events.Next(t)
			if ev.Supervisor == "root" {
				want := actors.EventRestarted
				if round == rootBudget {
					want = actors.EventStopped
				}
				if ev.Kind != want || ev.Child != "root/workspaces" {
					t.Fatalf("round %d: root decided %+v, want %s of root/workspaces", round, ev, want)
				}
				break
			}
		}
	}
	select {
	case ev := <-sys.Escalations():
		if ev.Child != "root" || !ev.Escalated || !strings.Contains(ev.Reason, "fault") {
			t.Errorf("escalation = %+v", ev)
		}
	case <-time.After(actorstest.Timeout):
		t.Fatal("no escalation left the root")
	}
}
