package host_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"buddi/core/action"
	"buddi/core/executor"
	"buddi/core/registry"
	"buddi/core/seal"
	"buddi/internal/pgtest"
	"buddi/migrations"
	"buddi/plugins"
	"buddi/plugins/host"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// key is the installation's seal key of these tests.
var key, _ = seal.New(bytes.Repeat([]byte{7}, 32))

// queue is core's queue port over an insert-only River client.
type queue struct{ executor.Inserter }

// ResumeTx enqueues nothing a test waits on: no run is suspended here.
func (queue) ResumeTx(context.Context, pgx.Tx, string, string) error { return nil }

// bench is host.exec behind a real registry and executor, on a database of the test's own.
// Each script it proposes appends a line to log, so what ran is counted on disk.
type bench struct {
	t     *testing.T
	pool  *pgxpool.Pool
	queue queue
	reg   *registry.Registry
	exec  *executor.Executor
	home  string
	calls atomic.Int64
}

func newBench(t *testing.T) *bench {
	t.Helper()
	b := &bench{t: t, pool: pgtest.Pool(t), home: t.TempDir()}
	client, err := river.NewClient(riverpgxv5.New(b.pool), &river.Config{Schema: migrations.RiverSchema})
	if err != nil {
		t.Fatal(err)
	}
	b.queue = queue{client}
	b.upgrade(host.Version)
	return b
}

// upgrade serves host.exec at version, as a new build of buddi would.
func (b *bench) upgrade(version string) {
	b.t.Helper()
	m := host.Manifest(host.Deps{Home: b.home, Lang: "C.UTF-8", User: "tester"})
	m.Version = version
	reg, err := registry.New(m)
	if err != nil {
		b.t.Fatal(err)
	}
	b.reg = reg
	b.exec = executor.New(b.pool, reg, b.queue, nil)
	b.exec.Seal = key
}

// propose has agent's run in conv propose a script that logs word, at delegation depth.
func (b *bench) propose(agent, conv string, depth int, word string) action.Record {
	b.t.Helper()
	args, _ := json.Marshal(map[string]any{"language": "bash", "script": "echo " + word + " >> log"})
	n := b.calls.Add(1)
	p, err := b.exec.Propose(context.Background(), plugins.Call{
		Tool: "host.exec", Args: args, Agent: agent, ConversationID: conv, DelegationDepth: depth, Granted: true,
		RunID: fmt.Sprintf("run-%d", n), CallID: fmt.Sprintf("call-%d", n),
	})
	if err != nil || p.Action == nil {
		b.t.Fatalf("propose %s: %+v, %v", word, p, err)
	}
	if p.Action.Hash == "" || p.Action.Tool != "host.exec" {
		b.t.Fatalf("the action of %s is not a hashed host.exec action: %+v", word, p.Action)
	}
	return *p.Action
}

// decide approves rec from the dashboard, remembering it as asked.
func (b *bench) decide(rec action.Record, remember action.Remember) error {
	_, err := executor.Decide(context.Background(), b.pool, b.queue, b.reg, key, action.Decision{
		ActionID: rec.ID, Approve: true, Surface: "dashboard", Remember: remember,
	})
	return err
}

// execute runs an approved action as the executor's job would, and says how it ended.
func (b *bench) execute(rec action.Record) action.Record {
	b.t.Helper()
	got, err := b.exec.ExecuteApproved(context.Background(), rec.ID)
	if err != nil {
		b.t.Fatalf("execute %s: %v", rec.ID, err)
	}
	return got
}

// ran is what the scripts have logged so far.
func (b *bench) ran() string {
	out, _ := os.ReadFile(filepath.Join(b.home, "log"))
	return strings.Join(strings.Fields(string(out)), " ")
}

// attempts counts the effect ledger's attempts for rec.
func (b *bench) attempts(rec action.Record) int {
	b.t.Helper()
	att, err := executor.Attempts(context.Background(), b.pool, rec.ID)
	if err != nil {
		b.t.Fatal(err)
	}
	return len(att)
}

// revoke revokes every live standing permission from surface.
func (b *bench) revoke(surface string) {
	b.t.Helper()
	ctx := context.Background()
	list, err := action.ListStanding(ctx, b.pool)
	if err != nil {
		b.t.Fatal(err)
	}
	for _, s := range list {
		if s.RevokedAt == nil {
			if err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error { return action.Revoke(ctx, tx, s.ID, surface) }); err != nil {
				b.t.Fatal(err)
			}
		}
	}
}

// newUUID is a fresh conversation id.
func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func state(rec action.Record) action.State { return rec.Approval.State }

// Allow once: the card is approved, the script runs through the ledger, and the same command
// again asks again.
func TestAllowOnceAsksAgain(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	conv := newUUID()
	first := b.propose("dev", conv, 0, "one")
	if state(first) != action.Pending || !strings.Contains(first.Envelope.Preview, "echo one >> log") ||
		first.Envelope.Summary != "Run bash on the host: echo one >> log" {
		t.Fatalf("first card: %s, %q / %q", state(first), first.Envelope.Summary, first.Envelope.Preview)
	}
	if err := b.decide(first, action.RememberNone); err != nil {
		t.Fatal(err)
	}
	if got := b.execute(first); state(got) != action.Succeeded || b.ran() != "one" || b.attempts(first) != 1 {
		t.Fatalf("after Allow once: %s, ran %q, %d attempts", state(got), b.ran(), b.attempts(first))
	}
	again := b.propose("dev", conv, 0, "one")
	if state(again) != action.Pending || again.ID == first.ID {
		t.Errorf("the same command again: %s (action %s after %s), want a new pending card", state(again), again.ID, first.ID)
	}
}

// For this conversation: the next command in it runs without a card, under the standing
// permission, still as a hashed action through the ledger; in another conversation it asks.
func TestAllowForThisConversation(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	conv, other := newUUID(), newUUID()
	first := b.propose("dev", conv, 0, "one")
	if err := b.decide(first, action.RememberConversation); err != nil {
		t.Fatal(err)
	}
	b.execute(first)
	next := b.propose("dev", conv, 0, "two")
	if state(next) != action.Approved || !strings.HasPrefix(next.Approval.DecidedBy, action.StandingPrefix) {
		t.Fatalf("next command in the conversation: %s by %q, want approved by a standing permission", state(next), next.Approval.DecidedBy)
	}
	if got := b.execute(next); state(got) != action.Succeeded || b.ran() != "one two" || b.attempts(next) != 1 {
		t.Fatalf("under the permission: %s, ran %q, %d attempts", state(got), b.ran(), b.attempts(next))
	}
	if elsewhere := b.propose("dev", other, 0, "three"); state(elsewhere) != action.Pending {
		t.Errorf("in another conversation: %s, want a card", state(elsewhere))
	}
	if other := b.propose("ops", conv, 0, "four"); state(other) != action.Pending {
		t.Errorf("another agent in the same conversation: %s, want a card", state(other))
	}
}

// Always for this agent: any conversation of the agent runs without a card; another agent
// and the agent's own delegated run still ask; revoking it makes the tool ask again, and a
// call approved under it but revoked before dispatch never runs.
func TestAlwaysForThisAgentAndRevoke(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	first := b.propose("dev", newUUID(), 0, "one")
	if err := b.decide(first, action.RememberAll); err != nil {
		t.Fatal(err)
	}
	b.execute(first)
	for _, conv := range []string{newUUID(), newUUID(), ""} {
		rec := b.propose("dev", conv, 0, "again")
		if state(rec) != action.Approved {
			t.Fatalf("dev in conversation %q: %s, want approved by the standing permission", conv, state(rec))
		}
		b.execute(rec)
	}
	if b.ran() != "one again again again" {
		t.Fatalf("ran %q", b.ran())
	}
	if rec := b.propose("ops", newUUID(), 0, "ops"); state(rec) != action.Pending {
		t.Errorf("another agent: %s, want a card", state(rec))
	}
	delegated := b.propose("dev", newUUID(), 1, "delegated")
	if state(delegated) != action.Pending {
		t.Errorf("dev's delegated run: %s, want a card (a delegate never inherits a standing permission)", state(delegated))
	}
	if err := b.decide(delegated, action.RememberAll); !errors.Is(err, action.ErrBadRemember) {
		t.Errorf("remembering a delegate's card: %v, want it refused", err)
	}

	// Approved under the permission, then revoked before dispatch: rechecked, refused.
	approved := b.propose("dev", newUUID(), 0, "late")
	b.revoke("terminal")
	if got := b.execute(approved); state(got) != action.Refused || strings.Contains(b.ran(), "late") || b.attempts(approved) != 0 {
		t.Errorf("revoked before dispatch: %s (%s), ran %q", state(got), got.Approval.Reason, b.ran())
	}
	if rec := b.propose("dev", newUUID(), 0, "after"); state(rec) != action.Pending {
		t.Errorf("after revoking: %s, want a card", state(rec))
	}
}

// A new version of host.exec voids every permission granted for the old one: its calls ask
// again, and a call approved under the old permission does not run on the new version.
func TestUpgradeVoidsTheStandingPermission(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	conv := newUUID()
	first := b.propose("dev", conv, 0, "one")
	if err := b.decide(first, action.RememberAll); err != nil {
		t.Fatal(err)
	}
	b.execute(first)
	approved := b.propose("dev", conv, 0, "two")
	if state(approved) != action.Approved {
		t.Fatalf("before the upgrade: %s", state(approved))
	}
	b.upgrade("1.0.1")
	if got := b.execute(approved); state(got) != action.Refused || strings.Contains(b.ran(), "two") {
		t.Errorf("approved for 1.0.0, executed on 1.0.1: %s (%s), ran %q", state(got), got.Approval.Reason, b.ran())
	}
	rec := b.propose("dev", conv, 0, "three")
	if state(rec) != action.Pending || rec.ToolVersion != "1.0.1" {
		t.Errorf("after the upgrade: %s at %s, want a card for 1.0.1", state(rec), rec.ToolVersion)
	}
}
