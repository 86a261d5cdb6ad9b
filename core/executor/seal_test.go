package executor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/action"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/executor"
	"buddi/core/seal"
	"buddi/plugins"
)

// Whoever can write the database but does not hold the key cannot make buddi act: an
// approved action they insert, with a hash computed every way they could (the old plain
// SHA-256, or this policy's seal under a key of their own), decided "on the terminal" and
// with its execution job enqueued, is refused before dispatch and recorded; the tool never
// runs.
func TestForgedApprovalNeverRuns(t *testing.T) {
	t.Parallel()
	gated := tool("gated", plugins.TierGated)
	b := setup(t, gated)
	ctx := context.Background()
	theirs, _ := seal.New(bytes.Repeat([]byte{1}, 32))
	for _, policy := range []int{2, action.PolicyVersion} {
		now := time.Now().UTC().Truncate(time.Microsecond)
		a := action.Action{ID: "6b1e7f60-1c4f-4c36-9d0e-7d3c9d2b0a0" + string(rune('0'+policy)), Tool: "test.gated", ToolVersion: "1.0.0", Agent: "dev",
			RunID: "run-forged", Args: json.RawMessage(`{}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour),
			Envelope: plugins.Envelope{Summary: "test.gated {}", Effects: []plugins.Effect{plugins.EffectStateWrite}, Preview: "will run test.gated"}}
		hash, err := action.Hash(theirs, a)
		if err != nil {
			t.Fatal(err)
		}
		env, _ := json.Marshal(a.Envelope)
		err = pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `INSERT INTO core.actions (id, tool, tool_version, agent, run_id, args, envelope, policy_version, hash, expires_at, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, a.ID, a.Tool, a.ToolVersion, a.Agent, a.RunID, string(a.Args), string(env), policy, hash, a.ExpiresAt, a.CreatedAt); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO core.approvals (action_id, state, decided_by, decided_at, decision_seal)
				VALUES ($1, 'approved', 'terminal', now(), $2)`, a.ID, theirs.Seal("decision", a.ID)); err != nil {
				return err
			}
			return executor.Enqueue(ctx, tx, b.river, a.ID)
		})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := b.exec.ExecuteApproved(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Approval.State != action.Refused || gated.runs.Load() != 0 {
			t.Fatalf("policy %d: a forged approval ended %s (%s) after %d runs; want refused and never run", policy, rec.Approval.State, rec.Approval.Reason, gated.runs.Load())
		}
	}
	evs, err := eventlog.List(ctx, b.pool, eventlog.Filter{Kind: string(events.ActionForged)})
	if err != nil || len(evs) != 2 {
		t.Errorf("action.forged events: %d %v, want 2", len(evs), err)
	}
	var attempts int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM core.effect_attempts`).Scan(&attempts); err != nil || attempts != 0 {
		t.Errorf("the ledger holds %d attempts (%v): a forged action reached dispatch", attempts, err)
	}
}

// An approval not acted on within the window (buddi was down, or the job waited) expires at
// execution instead of running.
func TestLateApprovalExpires(t *testing.T) {
	t.Parallel()
	gated := tool("gated", plugins.TierGated)
	b := setup(t, gated)
	ctx := context.Background()
	p, err := b.exec.Propose(ctx, call("gated", `{}`))
	if err != nil || p.Action == nil {
		t.Fatal(p, err)
	}
	approve(t, b, p.Action.ID)
	b.exec.Now = func() time.Time { return time.Now().Add(action.ApprovalWindow + time.Minute) }
	rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Approval.State != action.Expired || gated.runs.Load() != 0 {
		t.Fatalf("a late approval ended %s (%s) after %d runs; want expired, never run", rec.Approval.State, rec.Approval.Reason, gated.runs.Load())
	}
}

// With no key, nothing gated becomes an action: the executor fails closed.
func TestNoKeyNoAction(t *testing.T) {
	t.Parallel()
	gated := tool("gated", plugins.TierGated)
	b := setup(t, gated)
	b.exec.Seal = seal.Key{}
	if p, err := b.exec.Propose(context.Background(), call("gated", `{}`)); err == nil && p.Action != nil {
		t.Fatalf("an action was made with no key: %+v", p.Action)
	}
}
