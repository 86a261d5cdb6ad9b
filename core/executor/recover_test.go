package executor_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"buddi/core/action"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/executor"
	"buddi/plugins"
)

// jobStates counts the jobs of kind for an action by state.
func jobStates(t *testing.T, b bundle, kind, actionID string) map[string]int {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), `SELECT state::text, count(*) FROM river.river_job
		WHERE kind = $1 AND args->>'action_id' = $2 GROUP BY state`, kind, actionID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			t.Fatal(err)
		}
		out[state] = n
	}
	return out
}

// dieWithJob leaves an action's execute job as a killed buddi does: running, for ever.
func dieWithJob(t *testing.T, b bundle, actionID string) {
	t.Helper()
	if _, err := b.pool.Exec(context.Background(), `UPDATE river.river_job SET state = 'running', attempt = 1, attempted_at = now(),
		attempted_by = ARRAY['a-dead-buddi'] WHERE kind = 'action.execute' AND args->>'action_id' = $1`, actionID); err != nil {
		t.Fatal(err)
	}
}

func countEvents(t *testing.T, b bundle, kind events.Kind) int {
	t.Helper()
	ev, err := eventlog.List(context.Background(), b.pool, eventlog.Filter{Kind: string(kind), Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return len(ev)
}

// recoverTwice runs Recover as two starts in a row would: the first settles what was left,
// wanting n unknown; the second finds nothing and writes nothing.
func recoverTwice(t *testing.T, b bundle, want int) {
	t.Helper()
	ctx := context.Background()
	n, err := b.exec.Recover(ctx)
	if err != nil || n != want {
		t.Fatalf("first Recover = %d, %v; want %d", n, err, want)
	}
	var events, jobs int
	count := func() {
		if err := b.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM core.events), (SELECT count(*) FROM river.river_job)`).Scan(&events, &jobs); err != nil {
			t.Fatal(err)
		}
	}
	count()
	e0, j0 := events, jobs
	if n, err := b.exec.Recover(ctx); err != nil || n != 0 {
		t.Errorf("second Recover = %d, %v; want 0", n, err)
	}
	count()
	if events != e0 || jobs != j0 {
		t.Errorf("the second Recover wrote %d events and %d jobs; want none", events-e0, jobs-j0)
	}
	var running int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM river.river_job WHERE state = 'running'`).Scan(&running); err != nil || running != 0 {
		t.Errorf("%d jobs still running after Recover (%v); want the dead ones ended", running, err)
	}
}

// The jobs a killed buddi left running are ended at the next start, and each action carries
// on as its ledger says; a second start recovers nothing.
func TestRecoverEndsDeadExecuteJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("after dispatch: unknown, and its run resumes", func(t *testing.T) {
		t.Parallel()
		slow := tool("slow", plugins.TierGated)
		slow.hang, slow.started = make(chan struct{}), make(chan struct{})
		b := setup(t, slow)
		p, _ := b.exec.Propose(ctx, call("slow", `{}`))
		approve(t, b, p.Action.ID)
		done := make(chan struct{})
		go func() { // the execution a kill -9 cut off after dispatch
			defer close(done)
			_, _ = b.exec.ExecuteApproved(ctx, p.Action.ID)
		}()
		<-slow.started
		dieWithJob(t, b, p.Action.ID)
		recoverTwice(t, b, 1)
		if rec, _ := action.Get(ctx, b.pool, p.Action.ID); rec.Approval.State != action.Unknown {
			t.Errorf("state %s, want unknown", rec.Approval.State)
		}
		if got := jobStates(t, b, "run.resume", p.Action.ID); got["available"] != 1 {
			t.Errorf("run.resume jobs %v; want one to run", got)
		}
		if got := jobStates(t, b, "action.execute", p.Action.ID); got["available"] != 0 || got["completed"] != 1 {
			t.Errorf("action.execute jobs %v; want the dead one ended and none to run", got)
		}
		close(slow.hang)
		<-done
		if slow.runs.Load() != 1 {
			t.Errorf("dispatched %d times, want 1", slow.runs.Load())
		}
	})

	t.Run("before claim: it runs again", func(t *testing.T) {
		t.Parallel()
		gated := tool("gated", plugins.TierGated)
		b := setup(t, gated)
		p, _ := b.exec.Propose(ctx, call("gated", `{}`))
		approve(t, b, p.Action.ID)
		dieWithJob(t, b, p.Action.ID) // fetched, then killed before it claimed the action
		recoverTwice(t, b, 0)
		if got := jobStates(t, b, "action.execute", p.Action.ID); got["available"] != 1 || got["completed"] != 1 {
			t.Errorf("action.execute jobs %v; want the dead one ended and a new one to run", got)
		}
		if rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID); err != nil || rec.Approval.State != action.Succeeded || gated.runs.Load() != 1 {
			t.Errorf("then: %s, %v, runs %d", rec.Approval.State, err, gated.runs.Load())
		}
	})

	t.Run("before dispatch: approved again, not unknown", func(t *testing.T) {
		t.Parallel()
		gated := tool("gated", plugins.TierGated)
		b := setup(t, gated)
		p, _ := b.exec.Propose(ctx, call("gated", `{}`))
		approve(t, b, p.Action.ID)
		if _, err := b.pool.Exec(ctx, `UPDATE core.approvals SET state = 'executing' WHERE action_id = $1`, p.Action.ID); err != nil {
			t.Fatal(err)
		}
		dieWithJob(t, b, p.Action.ID)
		recoverTwice(t, b, 0)
		if rec, _ := action.Get(ctx, b.pool, p.Action.ID); rec.Approval.State != action.Approved {
			t.Errorf("state %s, want approved", rec.Approval.State)
		}
		if got := jobStates(t, b, "action.execute", p.Action.ID); got["available"] != 1 || got["completed"] != 1 {
			t.Errorf("action.execute jobs %v; want the dead one ended and a new one to run", got)
		}
	})

	t.Run("after the outcome: its run resumes", func(t *testing.T) {
		t.Parallel()
		gated := tool("gated", plugins.TierGated)
		b := setup(t, gated)
		p, _ := b.exec.Propose(ctx, call("gated", `{}`))
		approve(t, b, p.Action.ID)
		if rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID); err != nil || rec.Approval.State != action.Succeeded {
			t.Fatal(rec.Approval.State, err)
		}
		dieWithJob(t, b, p.Action.ID) // killed before the job enqueued the resumption
		recoverTwice(t, b, 0)
		if got := jobStates(t, b, "run.resume", p.Action.ID); got["available"] != 1 {
			t.Errorf("run.resume jobs %v; want one to run", got)
		}
		if got := jobStates(t, b, "action.execute", p.Action.ID); got["available"] != 0 {
			t.Errorf("action.execute jobs %v; want none to run: it succeeded", got)
		}
		if gated.runs.Load() != 1 {
			t.Errorf("dispatched %d times, want 1", gated.runs.Load())
		}
	})
}

// An auto call a killed buddi left dispatched is unknown at the next start, with an
// action.unknown event to review it by; a second start adds nothing.
func TestRecoverMarksDirectCallsUnknown(t *testing.T) {
	t.Parallel()
	slow := tool("slow", plugins.TierAuto)
	slow.hang, slow.started = make(chan struct{}), make(chan struct{})
	b := setup(t, slow)
	ctx := context.Background()
	c := call("slow", `{}`)
	c.CallID, c.ConversationID = "call-7", ""
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = b.exec.Propose(ctx, c)
	}()
	<-slow.started
	recoverTwice(t, b, 1)
	ev, err := eventlog.List(ctx, b.pool, eventlog.Filter{Kind: string(events.ActionUnknown)})
	if err != nil || len(ev) != 1 || !strings.Contains(string(ev[0].Payload), `"call_id": "call-7"`) {
		t.Errorf("action.unknown events: %v, %v; want one for call-7", ev, err)
	}
	close(slow.hang)
	<-done
}

// An auto call that runs out of time after its effect began is unknown, with an
// action.unknown event.
func TestDirectCallTimeoutIsUnknownWithEvent(t *testing.T) {
	t.Parallel()
	hang := tool("hang", plugins.TierAuto)
	hang.spec.Timeout = 50 * time.Millisecond
	hang.hang = make(chan struct{})
	t.Cleanup(func() { close(hang.hang) })
	b := setup(t, hang)
	p, err := b.exec.Propose(context.Background(), call("hang", `{}`))
	if err != nil || p.Result == nil || !p.Result.IsError {
		t.Fatal(p, err)
	}
	var state string
	if err := b.pool.QueryRow(context.Background(), `SELECT state FROM core.effect_attempts WHERE tool = 'test.hang'`).Scan(&state); err != nil || state != "unknown" {
		t.Errorf("ledger: %q, %v; want unknown", state, err)
	}
	if n := countEvents(t, b, events.ActionUnknown); n != 1 {
		t.Errorf("action.unknown events = %d, want 1", n)
	}
}

// A tool that says when its effect begins: the ledger records the call then, so a call
// stopped before it began is known not to have happened.
func TestReportedDispatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("recorded when the effect begins", func(t *testing.T) {
		t.Parallel()
		auto, gated := tool("auto", plugins.TierAuto), tool("gated", plugins.TierGated)
		auto.reports, gated.reports = true, true
		b := setup(t, auto, gated)
		c := call("auto", `{}`)
		c.CallID = "call-1"
		if p, err := b.exec.Propose(ctx, c); err != nil || p.Result == nil || p.Result.IsError {
			t.Fatal(p, err)
		}
		var state string
		if err := b.pool.QueryRow(ctx, `SELECT state FROM core.effect_attempts WHERE call_id = 'call-1'`).Scan(&state); err != nil || state != "succeeded" {
			t.Errorf("auto call's ledger: %q, %v; want succeeded", state, err)
		}
		p, _ := b.exec.Propose(ctx, call("gated", `{}`))
		approve(t, b, p.Action.ID)
		if rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID); err != nil || rec.Approval.State != action.Succeeded {
			t.Fatal(rec.Approval.State, err)
		}
		if att, _ := executor.Attempts(ctx, b.pool, p.Action.ID); len(att) != 1 || att[0].State != "succeeded" {
			t.Errorf("action's ledger %v; want one succeeded attempt", att)
		}
		if auto.effects.Load() != 1 || gated.effects.Load() != 1 {
			t.Errorf("effects: auto %d, gated %d; want 1 each", auto.effects.Load(), gated.effects.Load())
		}
	})

	t.Run("out of time before it began: failed, nothing recorded, never begins", func(t *testing.T) {
		t.Parallel()
		slow := tool("slow", plugins.TierAuto)
		slow.reports, slow.spec.Timeout = true, 50*time.Millisecond
		release, returned := make(chan struct{}), make(chan error, 1)
		slow.prepare = func(ctx context.Context) error {
			<-release // a preparation that outlives its deadline, ignoring it
			err := plugins.Dispatch(ctx)
			returned <- err
			return err
		}
		b := setup(t, slow)
		c := call("slow", `{}`)
		c.CallID = "call-2"
		p, err := b.exec.Propose(ctx, c)
		if err != nil || p.Result == nil || !p.Result.IsError || !strings.Contains(p.Result.Text, "before it began, so nothing was done") {
			t.Fatalf("%+v, %v; want a failure that says nothing was done", p.Result, err)
		}
		close(release)
		if err := <-returned; err == nil {
			t.Error("the dispatch after the deadline was allowed")
		}
		var rows int
		if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM core.effect_attempts WHERE call_id = 'call-2'`).Scan(&rows); err != nil || rows != 0 {
			t.Errorf("ledger rows %d, %v; want none: nothing was dispatched", rows, err)
		}
		if n := countEvents(t, b, events.ActionUnknown); n != 0 || slow.effects.Load() != 0 {
			t.Errorf("action.unknown events %d, effects %d; want none", n, slow.effects.Load())
		}
	})

	t.Run("stopped before it began: runs again, not unknown", func(t *testing.T) {
		t.Parallel()
		gated := tool("gated", plugins.TierGated)
		gated.reports = true
		preparing := make(chan struct{})
		var prepared atomic.Bool
		gated.prepare = func(ctx context.Context) error {
			if prepared.CompareAndSwap(false, true) {
				close(preparing)
				<-ctx.Done() // the process goes away while the command is prepared
				return ctx.Err()
			}
			return nil
		}
		b := setup(t, gated)
		p, _ := b.exec.Propose(ctx, call("gated", `{}`))
		approve(t, b, p.Action.ID)
		jctx, stop := context.WithCancel(ctx)
		go func() { <-preparing; stop() }()
		if _, err := b.exec.ExecuteApproved(jctx, p.Action.ID); err == nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v; want the stop", err)
		}
		dieWithJob(t, b, p.Action.ID)
		recoverTwice(t, b, 0)
		if rec, _ := action.Get(ctx, b.pool, p.Action.ID); rec.Approval.State != action.Approved {
			t.Fatalf("after Recover: %s, want approved", rec.Approval.State)
		}
		if rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID); err != nil || rec.Approval.State != action.Succeeded || gated.effects.Load() != 1 {
			t.Errorf("then: %s, %v, effects %d; want succeeded once", rec.Approval.State, err, gated.effects.Load())
		}
	})

	t.Run("two executors: one dispatch", func(t *testing.T) {
		t.Parallel()
		gated := tool("gated", plugins.TierGated)
		gated.reports = true
		b := setup(t, gated)
		p, _ := b.exec.Propose(ctx, call("gated", `{}`))
		approve(t, b, p.Action.ID)
		errs := make(chan error, 4)
		for range 4 {
			go func() {
				_, err := b.exec.ExecuteApproved(ctx, p.Action.ID)
				errs <- err
			}()
		}
		for range 4 {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
		if rec, _ := action.Get(ctx, b.pool, p.Action.ID); rec.Approval.State != action.Succeeded || gated.effects.Load() != 1 {
			t.Errorf("%s with %d effects; want succeeded once", rec.Approval.State, gated.effects.Load())
		}
	})
}
