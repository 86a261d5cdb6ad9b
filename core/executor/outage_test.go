package executor_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"buddi/core/action"
	"buddi/core/executor"
	"buddi/core/registry"
	"buddi/db"
	"buddi/internal/pgtest"
	"buddi/internal/proctest"
	"buddi/migrations"
	"buddi/plugins"
)

// The database goes away while effects run (the postmaster killed, or the whole server
// stopped) and comes back: the outcomes, known in memory, are written once it answers again,
// each once, and no effect runs twice.
func TestOutcomeSurvivesDatabaseOutage(t *testing.T) {
	t.Parallel()
	c, dsn := pgtest.OwnCluster(t)
	outages := []struct {
		name string
		// begin takes the database away; the function it returns brings it back.
		begin func(t *testing.T) (end func())
	}{
		{"postmaster killed", func(t *testing.T) func() {
			pid := c.Pid()
			backends := childrenOf(t, pid)
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-c.Done()
			// A backend serves on until it sees its postmaster gone, and one could still take
			// a write just after the kill: the outage begins once every backend has exited
			// (those that have not within 10 s are killed, as a crash would).
			deadline := time.Now().Add(10 * time.Second)
			for _, b := range backends {
				if exited, err := proctest.WaitExit(b, time.Until(deadline)); err != nil {
					t.Fatal(err)
				} else if !exited {
					_ = syscall.Kill(b, syscall.SIGKILL)
					if exited, _ := proctest.WaitExit(b, 10*time.Second); !exited {
						t.Fatalf("backend %d outlived SIGKILL", b)
					}
				}
			}
			return func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				if err := c.Start(ctx); err != nil {
					t.Errorf("start the cluster again: %v", err)
				}
			}
		}},
		{"server stopped", func(t *testing.T) func() {
			// The postmaster first, so that it forks no backend after the list is read;
			// each backend is a process group of its own.
			pid := c.Pid()
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			stopped := append(childrenOf(t, pid), pid)
			for _, p := range stopped {
				_ = syscall.Kill(p, syscall.SIGSTOP)
			}
			return func() {
				for _, p := range stopped {
					_ = syscall.Kill(p, syscall.SIGCONT)
				}
			}
		}},
	}
	for _, o := range outages { // one after the other: they share the cluster
		t.Run(o.name, func(t *testing.T) {
			auto, gated := tool("auto", plugins.TierAuto), tool("gated", plugins.TierGated)
			release := make(chan struct{})
			for _, tt := range []*testTool{auto, gated} {
				tt.hang, tt.started = release, make(chan struct{})
			}
			ctx := context.Background()
			pool, err := db.Open(ctx, dsn, db.Options{Name: "outage", MaxConns: 4})
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			b := outageBundle(t, pool, auto, gated)
			retried := make(chan string, 100)
			executor.SetOutcomeRetry(b.exec, 300*time.Millisecond, func(what string, _ error) {
				select {
				case retried <- what:
				default:
				}
			})

			autoCall := call("auto", `{}`)
			autoCall.CallID = "call-" + o.name
			p, err := b.exec.Propose(ctx, call("gated", `{}`))
			if err != nil || p.Action == nil {
				t.Fatal(p, err)
			}
			approve(t, b, p.Action.ID)
			type outcome struct {
				what string
				err  error
				ok   bool
			}
			done := make(chan outcome, 2)
			go func() {
				p, err := b.exec.Propose(ctx, autoCall)
				done <- outcome{"the auto call", err, err == nil && p.Result != nil && p.Result.Text == "done"}
			}()
			go func() {
				rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID)
				done <- outcome{"the approved action", err, err == nil && rec.Approval.State == action.Succeeded}
			}()
			<-auto.started
			<-gated.started

			var back sync.Once
			end := o.begin(t)
			defer back.Do(end) // whatever happens, the next test finds the database up
			close(release)     // the effects end while the database is away
			seen := map[string]bool{}
			for len(seen) < 2 { // both outcomes were refused at least once
				select {
				case what := <-retried:
					seen[what] = true
				case got := <-done:
					t.Fatalf("%s returned while the database was away: %v", got.what, got.err)
				case <-time.After(time.Minute):
					t.Fatalf("no write of an outcome failed while the database was away (seen %v)", seen)
				}
			}
			back.Do(end)
			backAt := time.Now()
			for range 2 {
				select {
				case got := <-done:
					if !got.ok {
						t.Errorf("%s: %v; want its outcome written once the database is back", got.what, got.err)
					}
				case <-time.After(3 * time.Minute):
					t.Fatal("an outcome was never written")
				}
			}
			t.Logf("both outcomes written %v after the database was back", time.Since(backAt).Round(time.Millisecond))

			if auto.runs.Load() != 1 || gated.runs.Load() != 1 {
				t.Errorf("dispatched auto %d, gated %d times; want once each", auto.runs.Load(), gated.runs.Load())
			}
			var autoState string
			if err := pool.QueryRow(ctx, `SELECT state FROM core.effect_attempts WHERE run_id = $1 AND call_id = $2`, autoCall.RunID, autoCall.CallID).Scan(&autoState); err != nil || autoState != "succeeded" {
				t.Errorf("the auto call's ledger row: %q, %v; want succeeded", autoState, err)
			}
			if att, err := executor.Attempts(ctx, pool, p.Action.ID); err != nil || len(att) != 1 || att[0].State != "succeeded" {
				t.Errorf("the action's ledger: %+v, %v; want one succeeded attempt", att, err)
			}
			for _, id := range []string{autoCall.CallID, p.Action.ID} {
				var results int
				if err := pool.QueryRow(ctx, `SELECT count(*) FROM core.events WHERE kind = 'tool.result'
					AND (payload->>'call_id' = $1 OR payload->>'action_id' = $1)`, id).Scan(&results); err != nil || results != 1 {
					t.Errorf("tool.result events of %s: %d, %v; want 1", id, results, err)
				}
			}
		})
	}
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // it exited
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		rest := b[bytes.LastIndexByte(b, ')')+1:]
		var state string
		var child, ppid int
		if _, err := fmt.Sscan(string(rest), &state, &ppid); err == nil && ppid == pid {
			if _, err := fmt.Sscan(filepath.Base(filepath.Dir(f)), &child); err == nil {
				out = append(out, child)
			}
		}
	}
	return out
}

// outageBundle is setup over pool, a database of the test's own cluster.
func outageBundle(t *testing.T, pool *pgxpool.Pool, tools ...*testTool) bundle {
	t.Helper()
	list := make([]plugins.Tool, len(tools))
	for i, tt := range tools {
		list[i] = tt
	}
	reg, err := registry.New(plugins.Manifest{Name: "test", Version: "1.0.0", Tools: list})
	if err != nil {
		t.Fatal(err)
	}
	insertOnly, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Schema: migrations.RiverSchema})
	if err != nil {
		t.Fatal(err)
	}
	exec := executor.New(pool, reg, jobQueue{insertOnly}, nil)
	exec.Seal = key
	return bundle{pool: pool, exec: exec, river: jobQueue{insertOnly}}
}
