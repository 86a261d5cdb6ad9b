package notify_test

import (
	"context"
	"strings"
	"testing"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/notify"
	"buddi/internal/pgtest"
)

// Every effect of unknown outcome, whichever path recorded it, is told to the owner once,
// urgently: pushed to the phone and listed on the dashboard.
func TestUnknownEffectsAreToldOnce(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	p := &phone{}
	n := &notify.Notifier{Pool: pool, Phone: p, Present: func() bool { return true }}
	unknown := func(payload events.ActionUnknownPayload) {
		t.Helper()
		if _, err := eventlog.Append(ctx, pool, events.ActionUnknown, "", payload); err != nil {
			t.Fatal(err)
		}
	}
	unknown(events.ActionUnknownPayload{Tool: "developer.run", RunID: "r", CallID: "c", Reason: "buddi stopped while it ran"})
	unknown(events.ActionUnknownPayload{ActionID: "00000000-0000-4000-8000-000000000009", From: "executing", Reason: "dispatched, then buddi stopped"})
	if err := n.TellUnknown(ctx); err != nil {
		t.Fatal(err)
	}
	if p.count() != 2 {
		t.Fatalf("%d pushes, want the two unknown effects pushed (urgent: even with the owner here)", p.count())
	}
	if err := n.TellUnknown(ctx); err != nil || p.count() != 2 {
		t.Fatalf("told again: %v, %d pushes", err, p.count())
	}
	unknown(events.ActionUnknownPayload{Tool: "developer.run", RunID: "r", CallID: "d"})
	if err := n.TellUnknown(ctx); err != nil || p.count() != 3 {
		t.Fatalf("a third: %v, %d pushes", err, p.count())
	}
	list, err := notify.List(ctx, pool, 10)
	if err != nil || len(list) != 3 {
		t.Fatalf("listed %d, %v", len(list), err)
	}
	if !strings.Contains(list[2].Body, "developer.run") || list[1].Link != "#/approvals/00000000-0000-4000-8000-000000000009" || list[0].Urgency != notify.Urgent {
		t.Fatalf("the notices: %+v", list)
	}
}
