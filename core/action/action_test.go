package action_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/action"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/seal"
	"buddi/internal/pgtest"
	"buddi/plugins"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// key is the installation's seal key of these tests.
var key, _ = seal.New(bytes.Repeat([]byte{7}, 32))

func envelope() plugins.Envelope {
	return plugins.Envelope{
		Summary: "Send mail to ann@example.com", Effects: []plugins.Effect{plugins.EffectNetWrite},
		Targets: []string{"ann@example.com"}, Preview: "To: ann@example.com\n\nhello",
		Choices: []plugins.Choice{{Name: "from", Options: []string{"me@example.com", "alias@example.com"}, Default: "me@example.com"}},
	}
}

func create(t testing.TB, pool *pgxpool.Pool, ttl time.Duration) action.Record {
	t.Helper()
	var rec action.Record
	err := pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
		var err error
		rec, err = action.Create(context.Background(), tx, key, action.Proposal{
			Call:     plugins.Call{Tool: "mail.send", Args: json.RawMessage(`{"to":"ann@example.com","body":"hello"}`), Agent: "concierge"},
			Version:  "1.0.0",
			Envelope: envelope(),
			TTL:      ttl,
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func decide(pool *pgxpool.Pool, d action.Decision) (action.Record, error) {
	var rec action.Record
	err := pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
		var err error
		rec, err = action.Decide(context.Background(), tx, key, d)
		return err
	})
	return rec, err
}

func TestCreateHashesCanonicalArguments(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	rec := create(t, pool, 0)
	if rec.Approval.State != action.Pending || rec.PolicyVersion != action.PolicyVersion {
		t.Errorf("new action = %+v", rec)
	}
	if string(rec.Args) != `{"body":"hello","to":"ann@example.com"}` {
		t.Errorf("args stored as %s", rec.Args)
	}
	reordered := rec.Action
	reordered.Args = json.RawMessage(` { "to" : "ann@example.com", "body":"hello"}`)
	same, err := action.Hash(key, reordered)
	if err != nil || same != rec.Hash {
		t.Errorf("hash of reordered arguments = %s, %v; want %s", same, err, rec.Hash)
	}
	changed := envelope()
	changed.Targets = append(changed.Targets, "bcc@example.com")
	other, _ := seal.New(bytes.Repeat([]byte{8}, 32))
	for name, h := range map[string]func() (string, error){
		"envelope": func() (string, error) { a := rec.Action; a.Envelope = changed; return action.Hash(key, a) },
		"version":  func() (string, error) { a := rec.Action; a.ToolVersion = "1.0.1"; return action.Hash(key, a) },
		"tool":     func() (string, error) { a := rec.Action; a.Tool = "mail.draft"; return action.Hash(key, a) },
		"agent":    func() (string, error) { a := rec.Action; a.Agent = "dev"; return action.Hash(key, a) },
		"id": func() (string, error) {
			a := rec.Action
			a.ID = "00000000-0000-4000-8000-000000000000"
			return action.Hash(key, a)
		},
		"expiry": func() (string, error) {
			a := rec.Action
			a.ExpiresAt = a.ExpiresAt.Add(time.Hour)
			return action.Hash(key, a)
		},
		"depth": func() (string, error) { a := rec.Action; a.DelegationDepth = 1; return action.Hash(key, a) },
		"key":   func() (string, error) { return action.Hash(other, rec.Action) },
		"args": func() (string, error) {
			a := rec.Action
			a.Args = json.RawMessage(`{"to":"bob@example.com","body":"hello"}`)
			return action.Hash(key, a)
		},
	} {
		if got, _ := h(); got == rec.Hash {
			t.Errorf("a different %s gives the same hash", name)
		}
	}
	if _, err := action.Hash(seal.Key{}, rec.Action); err == nil {
		t.Error("a zero key hashed an action")
	}
	ev, err := eventlog.List(context.Background(), pool, eventlog.Filter{Kind: string(events.ActionProposed)})
	if err != nil || len(ev) != 1 {
		t.Errorf("action.proposed events = %v, %v", ev, err)
	}
}

func TestActionsAreImmutable(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	rec := create(t, pool, 0)
	for _, sql := range []string{
		`UPDATE core.actions SET envelope = '{}' WHERE id = $1`,
		`DELETE FROM core.actions WHERE id = $1`,
	} {
		_, err := pool.Exec(context.Background(), sql, rec.ID)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || !strings.Contains(pgErr.Message, "immutable") {
			t.Errorf("%s: err = %v, want the immutability refusal", sql, err)
		}
	}
}

// 100 actions, each approved and rejected at once from two surfaces: exactly one wins, and
// the loser is told which way it went.
func TestConcurrentDecisionsHaveOneWinner(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	const n = 100
	recs := make([]action.Record, n)
	for i := range recs {
		recs[i] = create(t, pool, 0)
	}
	type outcome struct {
		approve bool
		rec     action.Record
		err     error
	}
	results := make([][2]outcome, n)
	var wg sync.WaitGroup
	for i := range recs {
		for j, approve := range []bool{true, false} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				surface := []string{"dashboard", "telegram"}[j]
				rec, err := decide(pool, action.Decision{ActionID: recs[i].ID, Approve: approve, Surface: surface})
				results[i][j] = outcome{approve, rec, err}
			}()
		}
	}
	wg.Wait()
	for i, pair := range results {
		var winners, losers []outcome
		for _, o := range pair {
			if o.err == nil {
				winners = append(winners, o)
			} else {
				losers = append(losers, o)
			}
		}
		if len(winners) != 1 || len(losers) != 1 {
			t.Fatalf("action %d: %d winners, %d losers: %+v", i, len(winners), len(losers), pair)
		}
		want := action.Rejected
		if winners[0].approve {
			want = action.Approved
		}
		var ad *action.AlreadyDecidedError
		if !errors.As(losers[0].err, &ad) || ad.State != want {
			t.Errorf("action %d: loser told %v, want already %s", i, losers[0].err, want)
		}
		got, err := action.Get(context.Background(), pool, recs[i].ID)
		if err != nil || got.Approval.State != want {
			t.Errorf("action %d stored as %s, want %s", i, got.Approval.State, want)
		}
	}
	evs, err := eventlog.List(context.Background(), pool, eventlog.Filter{Kind: events.ApprovalApproved.Family(), Limit: 1000})
	if err != nil || len(evs) != n {
		t.Errorf("decision events = %d, %v; want %d", len(evs), err, n)
	}
}

func TestPicksAreValidatedAgainstDeclaredChoices(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	tests := []struct {
		name  string
		picks map[string]string
		want  string // the stored pick, or "" for a refusal
	}{
		{"default", nil, "me@example.com"},
		{"declared option", map[string]string{"from": "alias@example.com"}, "alias@example.com"},
		{"undeclared option", map[string]string{"from": "evil@example.com"}, ""},
		{"undeclared choice", map[string]string{"bcc": "x@example.com"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := create(t, pool, 0)
			got, err := decide(pool, action.Decision{ActionID: rec.ID, Approve: true, Surface: "terminal", Picks: tt.picks})
			if tt.want == "" {
				if !errors.Is(err, action.ErrBadPick) {
					t.Fatalf("err = %v, want ErrBadPick", err)
				}
				if st, _ := action.Get(context.Background(), pool, rec.ID); st.Approval.State != action.Pending {
					t.Errorf("a refused pick changed the state to %s", st.Approval.State)
				}
				return
			}
			if err != nil || got.Approval.Picks["from"] != tt.want {
				t.Errorf("picks = %v, %v; want from=%s", got.Approval.Picks, err, tt.want)
			}
		})
	}
}

func TestExpiredActionCannotBeApproved(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	rec := create(t, pool, time.Millisecond)
	pgtest.Eventually(t, "expiry passes", func() bool {
		var past bool
		_ = pool.QueryRow(context.Background(), `SELECT expires_at <= now() FROM core.actions WHERE id = $1`, rec.ID).Scan(&past)
		return past
	})
	_, err := decide(pool, action.Decision{ActionID: rec.ID, Approve: true, Surface: "terminal"})
	if !errors.Is(err, action.ErrExpired) {
		t.Fatalf("err = %v, want ErrExpired", err)
	}
	if got, _ := action.Get(context.Background(), pool, rec.ID); got.Approval.State != action.Pending {
		t.Errorf("a refused late decision changed the state to %s", got.Approval.State)
	}
	var ids []string
	err = pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
		var err error
		ids, err = action.ExpireDue(context.Background(), tx)
		return err
	})
	if err != nil || len(ids) != 1 || ids[0] != rec.ID {
		t.Fatalf("ExpireDue = %v, %v; want [%s]", ids, err, rec.ID)
	}
	got, _ := action.Get(context.Background(), pool, rec.ID)
	if got.Approval.State != action.Expired {
		t.Errorf("state = %s, want expired", got.Approval.State)
	}
}

func TestOnlyOwnerSurfacesDecide(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	rec := create(t, pool, 0)
	for _, s := range []string{"", "agent", "concierge"} {
		if _, err := decide(pool, action.Decision{ActionID: rec.ID, Approve: true, Surface: s}); err == nil {
			t.Errorf("surface %q decided", s)
		}
	}
	if _, err := action.Get(context.Background(), pool, "not-a-uuid"); !errors.Is(err, action.ErrNotFound) {
		t.Errorf("Get(bad id) = %v, want ErrNotFound", err)
	}
}

func TestStandingPermissions(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	conv := "6f1c2a8e-3f41-4d5b-9a9e-0b7f3c2d1e00"
	reusable := plugins.Spec{Name: "dev.test", ReusableApproval: true}
	var granted action.Standing
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := action.Grant(ctx, tx, key, plugins.Spec{Name: "mail.send"}, "1", "dev", "", "terminal"); !errors.Is(err, action.ErrNotReusable) {
			return fmt.Errorf("grant of a tool that did not opt in: %v", err)
		}
		if _, err := action.Grant(ctx, tx, key, reusable, "1", "dev", "", "agent"); err == nil {
			return errors.New("a non-owner surface granted")
		}
		var err error
		granted, err = action.Grant(ctx, tx, key, reusable, "1", "dev", conv, "dashboard")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	call := plugins.Call{Tool: "dev.test", Agent: "dev", ConversationID: conv}
	tests := []struct {
		name    string
		call    func() plugins.Call
		version string
		want    bool
	}{
		{"same scope", func() plugins.Call { return call }, "1", true},
		{"other version", func() plugins.Call { return call }, "2", false},
		{"other conversation", func() plugins.Call { c := call; c.ConversationID = "00000000-0000-4000-8000-000000000000"; return c }, "1", false},
		{"other agent", func() plugins.Call { c := call; c.Agent = "concierge"; return c }, "1", false},
		{"delegate", func() plugins.Call { c := call; c.DelegationDepth = 1; return c }, "1", false},
		{"remote caller (buddi mcp)", func() plugins.Call { c := call; c.Remote = true; return c }, "1", false},
	}
	for _, tt := range tests {
		_, ok, err := action.Covering(ctx, pool, key, tt.call(), tt.version)
		if err != nil || ok != tt.want {
			t.Errorf("%s: covered = %v, %v; want %v", tt.name, ok, err, tt.want)
		}
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := action.Revoke(ctx, tx, granted.ID, "agent"); err == nil {
			return errors.New("a non-owner surface revoked")
		}
		return action.Revoke(ctx, tx, granted.ID, "telegram")
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := action.Covering(ctx, pool, key, call, "1"); ok {
		t.Error("a revoked permission still covers")
	}
}

// Transition moves an approval only to a state it records an event for (action.<state>):
// the others are reached by deciding or expiring, with their approval.* events.
func TestTransitionRecordsTheNewState(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	rec := create(t, pool, 0)
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := action.Transition(ctx, tx, rec.ID, action.Pending, action.Rejected, "", nil)
		return err
	})
	if err == nil {
		t.Error("pending → rejected through Transition was accepted; want it refused (Decide rejects)")
	}
	if got, _ := action.Get(ctx, pool, rec.ID); got.Approval.State != action.Pending {
		t.Errorf("a refused transition left the state %s", got.Approval.State)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := action.Transition(ctx, tx, rec.ID, action.Pending, action.Refused, "a test refuses it", nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := eventlog.List(ctx, pool, eventlog.Filter{Kind: string(events.ActionRefused)})
	if err != nil || len(evs) != 1 {
		t.Fatalf("action.refused events = %v, %v; want one", evs, err)
	}
	var p events.ActionMovedPayload
	if err := json.Unmarshal(evs[0].Payload, &p); err != nil || p != (events.ActionMovedPayload{ActionID: rec.ID, From: "pending", Reason: "a test refuses it"}) {
		t.Errorf("payload %s (%v), want the action, from pending, and the reason", evs[0].Payload, err)
	}
}
