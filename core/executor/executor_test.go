package executor_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"buddi/core/action"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/executor"
	"buddi/core/permission"
	"buddi/core/redact"
	"buddi/core/registry"
	"buddi/core/seal"
	"buddi/internal/pgtest"
	"buddi/migrations"
	"buddi/plugins"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// key is the installation's seal key of these tests.
var key, _ = seal.New(bytes.Repeat([]byte{9}, 32))

// testTool is a small real tool: Describe renders from the call (and, with file set, from
// that file's content); Execute counts and may hang.
type testTool struct {
	spec    plugins.Spec
	file    string
	runs    atomic.Int64
	hang    chan struct{} // when set, Execute blocks on it, ignoring ctx
	started chan struct{}
	ran     chan struct{} // when set, Execute sends on it
	picks   atomic.Pointer[map[string]string]
	after   func() // when set, called as Execute returns (e.g. to cancel the job's context)
	// reports makes the tool say when its effect begins (plugins.Dispatch); prepare, when
	// set, runs before that, as a command tool prepares its command.
	reports bool
	prepare func(ctx context.Context) error
	effects atomic.Int64 // effects begun: after the dispatch, for a tool that reports it
}

func (t *testTool) ReportsDispatch() bool { return t.reports }

func (t *testTool) Spec() plugins.Spec { return t.spec }

func (t *testTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	env := plugins.Envelope{Summary: t.spec.Name + " " + string(call.Args), Effects: t.spec.Effects, Preview: "will run " + t.spec.Name}
	if t.file != "" {
		b, err := os.ReadFile(t.file)
		if err != nil {
			return env, err
		}
		sum := sha256.Sum256(b)
		env.Preconditions = []plugins.Precondition{{What: "sha256 of " + t.file, Value: hex.EncodeToString(sum[:])}}
	}
	return env, nil
}

func (t *testTool) Execute(ctx context.Context, c plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	t.runs.Add(1)
	picks := c.Picks
	t.picks.Store(&picks)
	if t.after != nil {
		defer t.after()
	}
	if t.reports {
		if t.prepare != nil {
			if err := t.prepare(ctx); err != nil {
				return plugins.Result{}, err
			}
		}
		if err := plugins.Dispatch(ctx); err != nil {
			return plugins.Result{}, err
		}
	}
	t.effects.Add(1)
	if t.started != nil {
		close(t.started)
	}
	if t.hang != nil {
		<-t.hang
	}
	if t.ran != nil {
		t.ran <- struct{}{}
	}
	return plugins.Result{Text: "done"}, nil
}

func tool(name string, tier plugins.Tier) *testTool {
	return &testTool{spec: plugins.Spec{
		Name: "test." + name, Description: name, Tier: tier, Effects: []plugins.Effect{plugins.EffectStateWrite},
		Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`),
	}}
}

type bundle struct {
	pool  *pgxpool.Pool
	exec  *executor.Executor
	river jobQueue // the queue core enqueues in, its resumptions as run.resume jobs
}

func setup(t testing.TB, tools ...*testTool) bundle {
	t.Helper()
	list := make([]plugins.Tool, len(tools))
	for i, tt := range tools {
		list[i] = tt
	}
	return setupWith(t, list...)
}

func setupWith(t testing.TB, tools ...plugins.Tool) bundle {
	t.Helper()
	pool := pgtest.Pool(t)
	m := plugins.Manifest{Name: "test", Version: "1.0.0", Tools: tools}
	reg, err := registry.New(m)
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

var owner = plugins.Call{Agent: "dev", RunID: "run-1", Granted: true}

func call(name string, args string) plugins.Call {
	c := owner
	c.Tool, c.Args = "test."+name, json.RawMessage(args)
	return c
}

func approve(t testing.TB, b bundle, id string) {
	t.Helper()
	if _, err := executor.Decide(context.Background(), b.pool, b.river, nil, key, action.Decision{ActionID: id, Approve: true, Surface: "terminal"}); err != nil {
		t.Fatal(err)
	}
}

func TestAutoRunsAtOnceAndGatedWaits(t *testing.T) {
	t.Parallel()
	auto, gated := tool("auto", plugins.TierAuto), tool("gated", plugins.TierGated)
	b := setup(t, auto, gated)
	ctx := context.Background()

	p, err := b.exec.Propose(ctx, call("auto", `{"n":1}`))
	if err != nil || p.Result == nil || p.Result.Text != "done" || auto.runs.Load() != 1 {
		t.Fatalf("auto: %+v, %v, runs %d", p, err, auto.runs.Load())
	}
	p, err = b.exec.Propose(ctx, call("gated", `{"n":2}`))
	if err != nil || p.Action == nil || p.Action.Approval.State != action.Pending || gated.runs.Load() != 0 {
		t.Fatalf("gated: %+v, %v, runs %d", p, err, gated.runs.Load())
	}
	if p.Action.Envelope.Preview != "will run test.gated" {
		t.Errorf("preview = %q, want the tool's rendering", p.Action.Envelope.Preview)
	}
	// Executing before approval does nothing.
	if rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID); err != nil || rec.Approval.State != action.Pending || gated.runs.Load() != 0 {
		t.Fatalf("execute before approval: %s, %v, runs %d", rec.Approval.State, err, gated.runs.Load())
	}
	approve(t, b, p.Action.ID)
	var jobs int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM river.river_job WHERE kind = 'action.execute' AND args->>'action_id' = $1`, p.Action.ID).Scan(&jobs); err != nil || jobs != 1 {
		t.Fatalf("execution jobs after approval = %d, %v; want 1", jobs, err)
	}
	rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID)
	if err != nil || rec.Approval.State != action.Succeeded || gated.runs.Load() != 1 {
		t.Fatalf("after approval: %s, %v, runs %d", rec.Approval.State, err, gated.runs.Load())
	}
	// Once done, a rerun (a redelivered job) never dispatches again.
	if rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID); err != nil || rec.Approval.State != action.Succeeded || gated.runs.Load() != 1 {
		t.Fatalf("rerun: %s, %v, runs %d", rec.Approval.State, err, gated.runs.Load())
	}
	att, _ := executor.Attempts(ctx, b.pool, p.Action.ID)
	if len(att) != 1 || att[0].State != "succeeded" || att[0].Hash != rec.Hash {
		t.Errorf("ledger = %+v", att)
	}
}

func TestRefusalsAreRecordedNotRun(t *testing.T) {
	t.Parallel()
	b := setup(t, tool("gated", plugins.TierGated))
	for _, c := range []plugins.Call{call("missing", `{}`), call("gated", `{"n":"two"}`), call("gated", `[]`)} {
		p, err := b.exec.Propose(context.Background(), c)
		if err != nil || p.Refusal == "" || p.Action != nil || p.Result != nil {
			t.Errorf("%s %s: %+v, %v; want a refusal", c.Tool, c.Args, p, err)
		}
	}
	ev, _ := eventlog.List(context.Background(), b.pool, eventlog.Filter{Kind: string(events.ToolRefused)})
	if len(ev) != 3 {
		t.Errorf("tool.refused events = %d, want 3", len(ev))
	}
}

// The envelope changes between approval and execution: the action is refused and the effect
// never runs.
func TestChangedEnvelopeIsRefused(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "target.txt")
	if err := os.WriteFile(file, []byte("v1"), 0o600); err != nil {
		t.Fatal(err)
	}
	edit := tool("edit", plugins.TierGated)
	edit.file = file
	b := setup(t, edit)
	ctx := context.Background()
	p, err := b.exec.Propose(ctx, call("edit", `{"n":1}`))
	if err != nil || p.Action == nil {
		t.Fatal(p, err)
	}
	approve(t, b, p.Action.ID)
	if err := os.WriteFile(file, []byte("v2, changed behind the owner's back"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID)
	if err != nil || rec.Approval.State != action.Refused || edit.runs.Load() != 0 {
		t.Fatalf("state %s, err %v, runs %d; want refused and never run", rec.Approval.State, err, edit.runs.Load())
	}
	if att, _ := executor.Attempts(ctx, b.pool, p.Action.ID); len(att) != 0 {
		t.Errorf("a refused action reached the ledger: %+v", att)
	}
	ev, _ := eventlog.List(ctx, b.pool, eventlog.Filter{Kind: string(events.ActionRefused)})
	if len(ev) != 1 {
		t.Errorf("action.refused events = %d, want 1", len(ev))
	}
}

// A tool that hangs past its timeout: the attempt is unknown and is not retried.
func TestHangingToolIsUnknownAndNotRetried(t *testing.T) {
	t.Parallel()
	hang := tool("hang", plugins.TierGated)
	hang.spec.Timeout = 50 * time.Millisecond
	hang.hang = make(chan struct{})
	t.Cleanup(func() { close(hang.hang) })
	b := setup(t, hang)
	ctx := context.Background()
	p, err := b.exec.Propose(ctx, call("hang", `{}`))
	if err != nil || p.Action == nil {
		t.Fatal(p, err)
	}
	approve(t, b, p.Action.ID)
	rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID)
	if err != nil || rec.Approval.State != action.Unknown {
		t.Fatalf("state %s, err %v; want unknown", rec.Approval.State, err)
	}
	for range 2 {
		if rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID); err != nil || rec.Approval.State != action.Unknown {
			t.Fatalf("rerun: %s, %v", rec.Approval.State, err)
		}
	}
	if n := hang.runs.Load(); n != 1 {
		t.Errorf("the tool was dispatched %d times, want 1", n)
	}
	att, _ := executor.Attempts(ctx, b.pool, p.Action.ID)
	if len(att) != 1 || att[0].State != "unknown" {
		t.Errorf("ledger = %+v, want one unknown attempt", att)
	}
}

// A crash after dispatch leaves the attempt dispatched and the action executing; the job's
// rerun (another executor, as after a restart) marks it unknown and dispatches nothing.
func TestCrashAfterDispatchBecomesUnknown(t *testing.T) {
	t.Parallel()
	slow := tool("slow", plugins.TierGated)
	slow.hang, slow.started = make(chan struct{}), make(chan struct{})
	b := setup(t, slow)
	ctx := context.Background()
	p, _ := b.exec.Propose(ctx, call("slow", `{}`))
	approve(t, b, p.Action.ID)
	done := make(chan struct{})
	go func() { // the first executor: it dispatches and then "dies" (never records an outcome in time)
		defer close(done)
		_, _ = b.exec.ExecuteApproved(ctx, p.Action.ID)
	}()
	<-slow.started
	rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID) // the rerun of the job
	if err != nil || rec.Approval.State != action.Unknown {
		t.Fatalf("rerun after dispatch: %s, %v; want unknown", rec.Approval.State, err)
	}
	if n := slow.runs.Load(); n != 1 {
		t.Errorf("dispatched %d times, want 1", n)
	}
	// The first executor was alive after all: its outcome, when it arrives, is the truth.
	close(slow.hang)
	<-done
	if got, _ := action.Get(ctx, b.pool, p.Action.ID); got.Approval.State != action.Succeeded || !strings.Contains(got.Approval.Reason, "after the action was marked unknown") {
		t.Errorf("after the late outcome: %s (%s); want succeeded, saying it arrived late", got.Approval.State, got.Approval.Reason)
	}
	att, _ := executor.Attempts(ctx, b.pool, p.Action.ID)
	if len(att) != 1 || att[0].State != "succeeded" {
		t.Errorf("ledger = %+v, want one attempt, succeeded", att)
	}
}

// At start, Recover marks what a crash left executing with a dispatched attempt.
func TestRecoverMarksDispatchedUnknown(t *testing.T) {
	t.Parallel()
	slow := tool("slow", plugins.TierGated)
	slow.hang, slow.started = make(chan struct{}), make(chan struct{})
	b := setup(t, slow)
	ctx := context.Background()
	p, _ := b.exec.Propose(ctx, call("slow", `{}`))
	approve(t, b, p.Action.ID)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = b.exec.ExecuteApproved(ctx, p.Action.ID)
	}()
	<-slow.started
	n, err := b.exec.Recover(ctx)
	if err != nil || n != 1 {
		t.Fatalf("Recover = %d, %v; want 1", n, err)
	}
	if rec, _ := action.Get(ctx, b.pool, p.Action.ID); rec.Approval.State != action.Unknown {
		t.Errorf("state after Recover: %s, want unknown", rec.Approval.State)
	}
	var resumes int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM river.river_job WHERE kind = 'run.resume' AND args->>'action_id' = $1`, p.Action.ID).Scan(&resumes); err != nil || resumes != 1 {
		t.Errorf("run.resume jobs after Recover: %d (%v), want 1: the waiting run resumes now", resumes, err)
	}
	close(slow.hang)
	<-done
	if slow.runs.Load() != 1 {
		t.Errorf("dispatched %d times, want 1", slow.runs.Load())
	}
}

// Two executors racing on one approved action: exactly one dispatches.
func TestConcurrentExecutionDispatchesOnce(t *testing.T) {
	t.Parallel()
	noop := tool("noop", plugins.TierGated)
	b := setup(t, noop)
	ctx := context.Background()
	const n = 20
	ids := make([]string, n)
	for i := range ids {
		p, _ := b.exec.Propose(ctx, call("noop", `{}`))
		approve(t, b, p.Action.ID)
		ids[i] = p.Action.ID
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := b.exec.ExecuteApproved(ctx, id); err != nil {
					t.Errorf("execute %s: %v", id, err)
				}
			}()
		}
	}
	wg.Wait()
	if got := noop.runs.Load(); got != n {
		t.Errorf("%d dispatches for %d actions", got, n)
	}
	for _, id := range ids {
		if rec, _ := action.Get(ctx, b.pool, id); rec.Approval.State != action.Succeeded {
			t.Errorf("action %s is %s (%s)", id, rec.Approval.State, rec.Approval.Reason)
		}
	}
}

// The job's context is cancelled just as the tool returns success: the outcome is still
// recorded as it happened, not left executing to become unknown.
func TestOutcomeRecordedAfterCancellation(t *testing.T) {
	t.Parallel()
	noop := tool("noop", plugins.TierGated)
	b := setup(t, noop)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, _ := b.exec.Propose(ctx, call("noop", `{}`))
	approve(t, b, p.Action.ID)
	noop.after = cancel
	rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID)
	if err != nil || rec.Approval.State != action.Succeeded {
		t.Fatalf("%s, %v; want succeeded", rec.Approval.State, err)
	}
}

// Arguments in any spelling describe the same effect at proposal and before dispatch.
func TestNonCanonicalArgumentsExecute(t *testing.T) {
	t.Parallel()
	gated := tool("gated", plugins.TierGated) // its Describe renders the raw arguments
	b := setup(t, gated)
	ctx := context.Background()
	p, err := b.exec.Propose(ctx, call("gated", "{ \"n\" :\n 1 }"))
	if err != nil || p.Action == nil {
		t.Fatal(p, err)
	}
	approve(t, b, p.Action.ID)
	if rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID); err != nil || rec.Approval.State != action.Succeeded {
		t.Fatalf("%s (%s), %v; want succeeded", rec.Approval.State, rec.Approval.Reason, err)
	}
}

// The owner's pick reaches the tool; a standing permission takes the defaults, and a choice
// with no default waits for the owner.
func TestPicksReachTheTool(t *testing.T) {
	t.Parallel()
	send := &choiceTool{testTool: tool("send", plugins.TierGated)}
	send.spec.ReusableApproval = true
	b := setupWith(t, send)
	ctx := context.Background()
	p, _ := b.exec.Propose(ctx, call("send", `{}`))
	if _, err := executor.Decide(ctx, b.pool, b.river, nil, key, action.Decision{ActionID: p.Action.ID, Approve: true, Surface: "terminal",
		Picks: map[string]string{"from": "alias@example.com", "sign": "no"}}); err != nil {
		t.Fatal(err)
	}
	if rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID); err != nil || rec.Approval.State != action.Succeeded {
		t.Fatalf("%s, %v", rec.Approval.State, err)
	}
	if got := *send.picks.Load(); got["from"] != "alias@example.com" || got["sign"] != "no" {
		t.Errorf("the tool saw picks %v", got)
	}
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		_, err := action.Grant(ctx, tx, key, send.spec, "1.0.0", "dev", "", "terminal")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	send.noDefault = true
	p, _ = b.exec.Propose(ctx, call("send", `{}`))
	if p.Action.Approval.State != action.Pending {
		t.Errorf("a choice without a default was approved by a standing permission: %s", p.Action.Approval.State)
	}
	send.noDefault = false
	p, _ = b.exec.Propose(ctx, call("send", `{}`))
	if p.Action.Approval.State != action.Approved || p.Action.Approval.Picks["from"] != "me@example.com" {
		t.Errorf("standing approval: %s with picks %v; want approved with the defaults", p.Action.Approval.State, p.Action.Approval.Picks)
	}
}

// choiceTool declares choices in its envelope.
type choiceTool struct {
	*testTool
	noDefault bool
}

func (c *choiceTool) Describe(ctx context.Context, call plugins.Call) (plugins.Envelope, error) {
	env, err := c.testTool.Describe(ctx, call)
	def := "me@example.com"
	if c.noDefault {
		def = ""
	}
	env.Choices = []plugins.Choice{
		{Name: "from", Options: []string{"me@example.com", "alias@example.com"}, Default: def},
		{Name: "sign", Options: []string{"yes", "no"}, Default: "yes"},
	}
	return env, err
}

func TestDirectCallsUseTheLedger(t *testing.T) {
	t.Parallel()
	auto := tool("auto", plugins.TierAuto)
	b := setup(t, auto)
	if _, err := b.exec.Propose(context.Background(), call("auto", `{}`)); err != nil {
		t.Fatal(err)
	}
	var state string
	if err := b.pool.QueryRow(context.Background(), `SELECT state FROM core.effect_attempts WHERE tool = 'test.auto' AND action_id IS NULL`).Scan(&state); err != nil || state != "succeeded" {
		t.Errorf("ledger row for the auto call: %q, %v", state, err)
	}
}

func TestStandingPermissionApprovesAndIsRechecked(t *testing.T) {
	t.Parallel()
	reusable := tool("reuse", plugins.TierGated)
	reusable.spec.ReusableApproval = true
	b := setup(t, reusable)
	ctx := context.Background()
	var standing action.Standing
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		var err error
		standing, err = action.Grant(ctx, tx, key, reusable.spec, "1.0.0", "dev", "", "terminal")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.exec.Propose(ctx, call("reuse", `{}`))
	if err != nil || p.Action == nil || p.Action.Approval.State != action.Approved {
		t.Fatalf("with a standing permission: %+v, %v; want approved at once", p.Action, err)
	}
	// Revoked between approval and dispatch: refused.
	if err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error { return action.Revoke(ctx, tx, standing.ID, "dashboard") }); err != nil {
		t.Fatal(err)
	}
	rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID)
	if err != nil || rec.Approval.State != action.Refused || reusable.runs.Load() != 0 {
		t.Fatalf("after revocation: %s, %v, runs %d", rec.Approval.State, err, reusable.runs.Load())
	}
	// A delegate never inherits one.
	c := call("reuse", `{}`)
	c.DelegationDepth = 1
	p, _ = b.exec.Propose(ctx, c)
	if p.Action == nil || p.Action.Approval.State != action.Pending {
		t.Errorf("delegate's call: %+v, want pending", p)
	}
}

// A card raised inside a delegation is approved once: remembering it is refused, nothing is
// granted and the action stays pending for the owner.
func TestRememberIsRefusedInsideADelegation(t *testing.T) {
	t.Parallel()
	reusable := tool("reuse", plugins.TierGated)
	reusable.spec.ReusableApproval = true
	b := setup(t, reusable)
	reg, err := registry.New(plugins.Manifest{Name: "test", Version: "1.0.0", Tools: []plugins.Tool{reusable}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := call("reuse", `{}`)
	c.DelegationDepth = 1
	p, err := b.exec.Propose(ctx, c)
	if err != nil || p.Action == nil {
		t.Fatalf("%+v, %v", p, err)
	}
	for _, r := range []action.Remember{action.RememberAll, action.RememberConversation} {
		_, err = executor.Decide(ctx, b.pool, b.river, reg, key, action.Decision{ActionID: p.Action.ID, Approve: true, Surface: "dashboard", Remember: r})
		if !errors.Is(err, action.ErrBadRemember) || !strings.Contains(err.Error(), "inside a delegation") {
			t.Fatalf("remember %q on a delegate's card: %v, want ErrBadRemember", r, err)
		}
	}
	got, _ := action.Get(ctx, b.pool, p.Action.ID)
	granted, _ := action.ListStanding(ctx, b.pool)
	if got.Approval.State != action.Pending || len(granted) != 0 {
		t.Errorf("after the refused remember: %s, %d standing permissions; want pending and none", got.Approval.State, len(granted))
	}
}

func TestRejectedIsNeverExecuted(t *testing.T) {
	t.Parallel()
	gated := tool("gated", plugins.TierGated)
	b := setup(t, gated)
	ctx := context.Background()
	p, _ := b.exec.Propose(ctx, call("gated", `{}`))
	if _, err := executor.Decide(ctx, b.pool, b.river, nil, key, action.Decision{ActionID: p.Action.ID, Surface: "telegram", Reason: "not now"}); err != nil {
		t.Fatal(err)
	}
	rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID)
	if err != nil || rec.Approval.State != action.Rejected || gated.runs.Load() != 0 {
		t.Fatalf("%s, %v, runs %d", rec.Approval.State, err, gated.runs.Load())
	}
	_, err = executor.Decide(ctx, b.pool, b.river, nil, key, action.Decision{ActionID: p.Action.ID, Approve: true, Surface: "dashboard"})
	var ad *action.AlreadyDecidedError
	if !errors.As(err, &ad) || ad.State != action.Rejected || ad.By != "telegram" {
		t.Errorf("late approval: %v, want already rejected on telegram", err)
	}
}

// The permission engine's answer maps onto tiers: allow keeps the registry's tier, prompt
// makes the call gated, block refuses it with the engine's reason, and an unreadable policy
// refuses.
func TestPolicyAnswersMapOntoTiers(t *testing.T) {
	t.Parallel()
	type combo struct {
		mode   permission.Mode
		effect plugins.Effect
	}
	found := map[permission.Verdict]combo{}
	for _, m := range []permission.Mode{permission.ModePlan, permission.ModeAcceptEdits, permission.ModeAuto} {
		for _, eff := range permission.AllEffects() {
			d := permission.Evaluate(permission.Call{Tool: "test.x", Effects: []permission.Effect{eff}, Args: map[string]any{}},
				permission.Agent{ExecutionMode: m}, permission.Settings{})
			if _, ok := found[d.Verdict]; !ok {
				found[d.Verdict] = combo{m, eff}
			}
		}
	}
	for _, v := range []permission.Verdict{permission.VerdictAllow, permission.VerdictPrompt, permission.VerdictBlock} {
		if _, ok := found[v]; !ok {
			t.Fatalf("no mode and effect give %v", v)
		}
	}
	for verdict, c := range found {
		t.Run(verdict.String(), func(t *testing.T) {
			t.Parallel()
			auto := tool("auto", plugins.TierAuto)
			auto.spec.Effects = []plugins.Effect{c.effect}
			b := setup(t, auto)
			b.exec.Policy = func(context.Context, plugins.Call) (permission.Agent, permission.Settings, error) {
				return permission.Agent{ExecutionMode: c.mode}, permission.Settings{}, nil
			}
			p, err := b.exec.Propose(context.Background(), call("auto", `{}`))
			if err != nil {
				t.Fatal(err)
			}
			switch verdict {
			case permission.VerdictAllow:
				if p.Tier != plugins.TierAuto || p.Result == nil {
					t.Errorf("allow: %+v, want run at once", p)
				}
			case permission.VerdictPrompt:
				if p.Tier != plugins.TierGated || p.Action == nil || auto.runs.Load() != 0 {
					t.Errorf("prompt: %+v, want a pending action", p)
				}
			case permission.VerdictBlock:
				if p.Refusal == "" || auto.runs.Load() != 0 {
					t.Errorf("block: %+v, want a refusal", p)
				}
			}
		})
	}
	t.Run("unreadable", func(t *testing.T) {
		t.Parallel()
		auto := tool("auto", plugins.TierAuto)
		b := setup(t, auto)
		b.exec.Policy = func(context.Context, plugins.Call) (permission.Agent, permission.Settings, error) {
			return permission.Agent{}, permission.Settings{}, errors.New("settings.json: bad JSON")
		}
		p, err := b.exec.Propose(context.Background(), call("auto", `{}`))
		if err != nil || p.Refusal == "" || auto.runs.Load() != 0 {
			t.Errorf("%+v, %v: want a refusal", p, err)
		}
	})
}

func TestExpireWorkerExpiresDueActions(t *testing.T) {
	t.Parallel()
	b := setup(t, tool("gated", plugins.TierGated))
	ctx := context.Background()
	var rec action.Record
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		var err error
		rec, err = action.Create(ctx, tx, key, action.Proposal{Call: call("gated", `{}`), Version: "1.0.0", TTL: time.Millisecond})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := b.exec.Propose(ctx, call("gated", `{}`))
	pgtest.Eventually(t, "the short expiry passes", func() bool {
		var past bool
		_ = b.pool.QueryRow(ctx, `SELECT expires_at <= now() FROM core.actions WHERE id = $1`, rec.ID).Scan(&past)
		return past
	})
	w := &executor.ExpireWorker{Pool: b.pool}
	if err := w.Work(ctx, &river.Job[executor.ExpireArgs]{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := action.Get(ctx, b.pool, rec.ID); got.Approval.State != action.Expired {
		t.Errorf("due action is %s, want expired", got.Approval.State)
	}
	if got, _ := action.Get(ctx, b.pool, fresh.Action.ID); got.Approval.State != action.Pending {
		t.Errorf("fresh action is %s, want pending", got.Approval.State)
	}
}

// 100 actions, each approved and rejected at once through the surfaces' path: one winner per
// action, the loser told the outcome, and exactly one execution job per approval that won.
func TestConcurrentDecideEnqueuesOncePerApproval(t *testing.T) {
	t.Parallel()
	b := setup(t, tool("gated", plugins.TierGated))
	ctx := context.Background()
	const n = 100
	ids := make([]string, n)
	for i := range ids {
		p, err := b.exec.Propose(ctx, call("gated", `{}`))
		if err != nil || p.Action == nil {
			t.Fatal(p, err)
		}
		ids[i] = p.Action.ID
	}
	var wg sync.WaitGroup
	var approvedWins, losersTold atomic.Int64
	for _, id := range ids {
		for j, approve := range []bool{true, false} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := executor.Decide(ctx, b.pool, b.river, nil, key, action.Decision{ActionID: id, Approve: approve, Surface: []string{"dashboard", "telegram"}[j]})
				var ad *action.AlreadyDecidedError
				switch {
				case err == nil && approve:
					approvedWins.Add(1)
				case err == nil:
				case errors.As(err, &ad):
					losersTold.Add(1)
				default:
					t.Errorf("decide %s: %v", id, err)
				}
			}()
		}
	}
	wg.Wait()
	if losersTold.Load() != n {
		t.Errorf("%d losers told the outcome, want %d", losersTold.Load(), n)
	}
	var jobs, approved int64
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM river.river_job WHERE kind = 'action.execute'`).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM core.approvals WHERE state = 'approved'`).Scan(&approved); err != nil {
		t.Fatal(err)
	}
	if jobs != approvedWins.Load() || approved != jobs {
		t.Errorf("%d execution jobs, %d approvals won, %d approved rows: want all equal", jobs, approvedWins.Load(), approved)
	}
}

// An action left executing before anything was dispatched goes back to approved, with its
// job, at start.
func TestRecoverRequeuesUndispatched(t *testing.T) {
	t.Parallel()
	gated := tool("gated", plugins.TierGated)
	b := setup(t, gated)
	ctx := context.Background()
	p, _ := b.exec.Propose(ctx, call("gated", `{}`))
	approve(t, b, p.Action.ID)
	// The claim happened and then the process died before the ledger: executing, no attempt,
	// and its job left "running".
	if _, err := b.pool.Exec(ctx, `UPDATE core.approvals SET state = 'executing' WHERE action_id = $1`, p.Action.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `UPDATE river.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE kind = 'action.execute'`); err != nil {
		t.Fatal(err)
	}
	n, err := b.exec.Recover(ctx)
	if err != nil || n != 0 {
		t.Fatalf("Recover = %d, %v; want nothing unknown", n, err)
	}
	rec, _ := action.Get(ctx, b.pool, p.Action.ID)
	var available int
	_ = b.pool.QueryRow(ctx, `SELECT count(*) FROM river.river_job WHERE kind = 'action.execute' AND state = 'available'`).Scan(&available)
	if rec.Approval.State != action.Approved || available != 1 {
		t.Fatalf("after Recover: %s with %d available jobs; want approved with a job to run now", rec.Approval.State, available)
	}
	if rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID); err != nil || rec.Approval.State != action.Succeeded || gated.runs.Load() != 1 {
		t.Errorf("then: %s, %v, runs %d", rec.Approval.State, err, gated.runs.Load())
	}
}

// narrowTool declares session and narrows every call to gated, as the developer tools do.
type narrowTool struct{ *testTool }

func (n narrowTool) TierFor(context.Context, plugins.Call) plugins.Tier { return plugins.TierGated }

// The policy is rechecked before dispatch for a session-declared tool too: a rule added after
// the approval refuses the action, and the tool never runs.
func TestPolicyRecheckedBeforeDispatchForSessionTools(t *testing.T) {
	t.Parallel()
	fetch := tool("fetch", plugins.TierSession)
	fetch.spec.Effects = []plugins.Effect{plugins.EffectNetRead}
	b := setupWith(t, narrowTool{fetch})
	network := permission.NetworkAllow
	b.exec.Policy = func(context.Context, plugins.Call) (permission.Agent, permission.Settings, error) {
		return permission.Agent{ExecutionMode: permission.ModeAuto}, permission.Merge(permission.Layer{Network: &network}), nil
	}
	ctx := context.Background()
	c := call("fetch", `{}`)
	c.ConversationID = "6f1c2a8e-3f41-4d5b-9a9e-0b7f3c2d1e00"
	c.Owner = &plugins.OwnerRequest{Surface: "terminal", ExpiresAt: time.Now().Add(time.Hour)}
	p, err := b.exec.Propose(ctx, c)
	if err != nil || p.Action == nil {
		t.Fatalf("%+v, %v: want a pending action", p, err)
	}
	approve(t, b, p.Action.ID)
	network = permission.NetworkDeny // the owner turns the network off after approving
	rec, err := b.exec.ExecuteApproved(ctx, p.Action.ID)
	if err != nil || rec.Approval.State != action.Refused || fetch.runs.Load() != 0 {
		t.Fatalf("%s (%s), %v, runs %d; want refused, never run", rec.Approval.State, rec.Approval.Reason, err, fetch.runs.Load())
	}
}

// leakyTool returns a secret in its result, or fails with it in the error.
type leakyTool struct {
	*testTool
	fail bool
}

func (l leakyTool) Execute(context.Context, plugins.Call, *plugins.Envelope) (plugins.Result, error) {
	if l.fail {
		return plugins.Result{}, errors.New("login refused for token s3cret-value-xyz")
	}
	return plugins.Result{Text: "the token is s3cret-value-xyz", Data: json.RawMessage(`{"token":"s3cret-value-xyz"}`)}, nil
}

// A secret a tool returns or fails with reaches neither the model nor the record.
func TestSecretsAreScrubbedFromResultsAndRecords(t *testing.T) {
	t.Parallel()
	ok, bad := tool("ok", plugins.TierAuto), tool("bad", plugins.TierAuto)
	b := setupWith(t, leakyTool{testTool: ok}, leakyTool{testTool: bad, fail: true})
	b.exec.Scrub = redact.New(map[string]string{"API_TOKEN": "s3cret-value-xyz"})
	ctx := context.Background()
	p, err := b.exec.Propose(ctx, call("ok", `{}`))
	if err != nil || p.Result == nil {
		t.Fatal(p, err)
	}
	if strings.Contains(p.Result.Text+string(p.Result.Data), "s3cret") || !strings.Contains(p.Result.Text, "‹secret:API_TOKEN›") {
		t.Errorf("result = %q %s", p.Result.Text, p.Result.Data)
	}
	if _, err := b.exec.Propose(ctx, call("bad", `{}`)); err != nil {
		t.Fatal(err)
	}
	var leaks int
	if err := b.pool.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM core.events WHERE payload::text LIKE '%s3cret%')
		     + (SELECT count(*) FROM core.effect_attempts WHERE error LIKE '%s3cret%')`).Scan(&leaks); err != nil || leaks != 0 {
		t.Errorf("%d records hold the secret (%v)", leaks, err)
	}
}

// resumeJob stands for the runtime's resumption of a run: a run.resume job, one per action.
type resumeJob struct {
	RunID    string `json:"run_id"`
	ActionID string `json:"action_id"`
}

func (resumeJob) Kind() string { return "run.resume" }

func (resumeJob) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: "runs", UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// jobQueue is core's queue port as these tests fill it.
type jobQueue struct{ executor.Inserter }

func (q jobQueue) ResumeTx(ctx context.Context, tx pgx.Tx, runID, actionID string) error {
	_, err := q.InsertTx(ctx, tx, resumeJob{RunID: runID, ActionID: actionID}, nil)
	return err
}

// Permits is the gate's answer without a call: true only for a call that would run at once.
// The network turned off, a mode that asks, a policy that cannot be read, a gated tool and
// an unknown tool are each false; nothing is recorded and nothing runs.
func TestPermitsOnlyWhatWouldRunAtOnce(t *testing.T) {
	t.Parallel()
	search := tool("search", plugins.TierAuto)
	search.spec.Effects = []plugins.Effect{plugins.EffectNetRead}
	gated := tool("send", plugins.TierGated)
	b := setup(t, search, gated)
	ctx := context.Background()
	if !b.exec.Permits(ctx, call("search", `{}`)) {
		t.Error("no policy: an auto call is refused")
	}
	network, mode := permission.NetworkAllow, permission.ModeAuto
	var broken error
	b.exec.Policy = func(context.Context, plugins.Call) (permission.Agent, permission.Settings, error) {
		return permission.Agent{ExecutionMode: mode}, permission.Merge(permission.Layer{Network: &network}), broken
	}
	if !b.exec.Permits(ctx, call("search", `{}`)) {
		t.Error("the network open: refused")
	}
	network = permission.NetworkDeny
	if b.exec.Permits(ctx, call("search", `{}`)) {
		t.Error("the network off: permitted")
	}
	network, broken = permission.NetworkAllow, errors.New("settings.json: bad JSON")
	if b.exec.Permits(ctx, call("search", `{}`)) {
		t.Error("an unreadable policy: permitted")
	}
	broken = nil
	for _, c := range []plugins.Call{call("send", `{}`), call("nowhere", `{}`)} {
		if b.exec.Permits(ctx, c) {
			t.Errorf("%s: permitted", c.Tool)
		}
	}
	if search.runs.Load() != 0 || gated.runs.Load() != 0 {
		t.Error("a tool ran")
	}
}
