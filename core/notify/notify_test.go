package notify_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/notify"
	"buddi/internal/pgtest"
	"buddi/scheduler"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// phone records what was pushed to it, and fails when told to.
type phone struct {
	mu     sync.Mutex
	pushed []notify.Row
	fail   error
}

func (p *phone) Push(_ context.Context, r notify.Row) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail != nil {
		return p.fail
	}
	p.pushed = append(p.pushed, r)
	return nil
}

func (p *phone) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pushed)
}

func TestRouteByUrgencyAndPresence(t *testing.T) {
	for _, c := range []struct {
		u              notify.Urgency
		present, phone bool
		want           []string
	}{
		{notify.Urgent, true, true, []string{"dashboard", "telegram"}},
		{notify.Urgent, false, false, []string{"dashboard"}},
		{notify.Normal, true, true, []string{"dashboard"}},
		{notify.Normal, false, true, []string{"dashboard", "telegram"}},
		{notify.Normal, false, false, []string{"dashboard"}},
		{notify.Info, false, true, []string{"digest"}},
		{notify.Info, true, true, []string{"digest"}},
	} {
		if got := notify.Route(c.u, c.present, c.phone); !slices.Equal(got, c.want) {
			t.Errorf("Route(%s, present %v, phone %v) = %v, want %v", c.u, c.present, c.phone, got, c.want)
		}
	}
}

// A notice is one row per key: told again (a rerun of the job that decided it), nothing is
// pushed twice and no second row or event is written. The owner away, a normal notice is
// pushed; present, it stays on the dashboard.
func TestOwnerPushesOncePerRow(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	p := &phone{}
	present := false
	n := &notify.Notifier{Pool: pool, Phone: p, Present: func() bool { return present }}

	report := notify.Notice{Key: "mission.report:run-1", Kind: "mission.report", Title: "@dev reports", Body: "The build is green."}
	first, err := n.Owner(ctx, report)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first.Routes, []string{"dashboard", "telegram"}) || first.PushedAt == nil || p.count() != 1 {
		t.Fatalf("away: routes %v, pushed at %v, %d pushes; want it pushed once", first.Routes, first.PushedAt, p.count())
	}
	again, err := n.Owner(ctx, report)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || p.count() != 1 {
		t.Fatalf("told again: row %d (first %d), %d pushes; want the same row and no second push", again.ID, first.ID, p.count())
	}
	evs, err := eventlog.List(ctx, pool, eventlog.Filter{Kind: string(events.OwnerNotified)})
	if err != nil || len(evs) != 1 {
		t.Fatalf("owner.notified events: %d (%v), want 1", len(evs), err)
	}

	present = true
	here, err := n.Owner(ctx, notify.Notice{Key: "mission.report:run-2", Kind: "mission.report", Title: "@dev reports"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(here.Routes, []string{"dashboard"}) || here.PushedAt != nil || p.count() != 1 {
		t.Fatalf("present: routes %v, %d pushes; want the dashboard only", here.Routes, p.count())
	}

	// A push that fails is recorded on the row, which stays on the dashboard; it is not
	// tried again by a rerun (the owner sees it on Home).
	p.fail = errors.New("the Bot API is down")
	down, err := n.Owner(ctx, notify.Notice{Key: "incident:1", Kind: "incident", Urgency: notify.Urgent, Title: "Work was lost"})
	if err != nil {
		t.Fatal(err)
	}
	if down.PushedAt != nil || down.PushError == "" {
		t.Fatalf("a failed push: pushed at %v, error %q", down.PushedAt, down.PushError)
	}
	list, err := notify.List(ctx, pool, 10)
	if err != nil || len(list) != 3 || list[0].ID != down.ID {
		t.Fatalf("the dashboard's list: %d rows, %v; want the three, newest first", len(list), err)
	}
	if err := notify.Seen(ctx, pool, down.ID); err != nil {
		t.Fatal(err)
	}
	if err := notify.Seen(ctx, pool, 999999); !errors.Is(err, notify.ErrNotFound) {
		t.Fatalf("seen of no row: %v", err)
	}
	if _, err := n.Owner(ctx, notify.Notice{Kind: "x", Title: "no key"}); err == nil {
		t.Fatal("a notice without a key was written")
	}
	digest, err := n.Owner(ctx, notify.Notice{Key: "info:1", Kind: "sentinel", Urgency: notify.Info, Title: "A quiet fact"})
	if err != nil || !slices.Equal(digest.Routes, []string{"digest"}) {
		t.Fatalf("info: %v %v", digest.Routes, err)
	}
	if list, _ := notify.List(ctx, pool, 10); len(list) != 3 {
		t.Fatalf("an info notice is listed on Home (%d rows); it waits for the digest", len(list))
	}
	// It waits in the weekly recap's digest, once, however often it is told.
	if _, err := n.Owner(ctx, notify.Notice{Key: "info:1", Kind: "sentinel", Urgency: notify.Info, Title: "A quiet fact"}); err != nil {
		t.Fatal(err)
	}
	text, upto, err := scheduler.Digest(ctx, pool)
	if err != nil || upto == 0 || strings.Count(text, "A quiet fact") != 1 {
		t.Fatalf("the digest the recap reads: %q (upto %d, %v)", text, upto, err)
	}
}

// A row planted under a notice's key (written behind buddi's back) lends the push none of
// its text: the phone gets what the caller told.
func TestPlantedRowPushesOnlyTheCallersText(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `INSERT INTO core.owner_notifications (key, kind, urgency, title, body, routes)
		VALUES ('incident:x', 'incident', 'urgent', 'Your bank needs you', 'Sign in at http://evil.example', '{dashboard,telegram}')`); err != nil {
		t.Fatal(err)
	}
	p := &phone{}
	n := &notify.Notifier{Pool: pool, Phone: p}
	if _, err := n.Owner(ctx, notify.Notice{Key: "incident:x", Kind: "incident", Urgency: notify.Urgent, Title: "Work was lost", Body: "3 jobs died."}); err != nil {
		t.Fatal(err)
	}
	if p.count() != 1 || p.pushed[0].Title != "Work was lost" || p.pushed[0].Body != "3 jobs died." {
		t.Fatalf("pushed %+v: want the caller's text only", p.pushed)
	}
}
