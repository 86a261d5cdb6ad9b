package scheduler_test

import (
	"context"

	"github.com/jackc/pgx/v5"

	"buddi/core/conversation"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/scheduler"
)

func TestReminders(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	limits := scheduler.ReminderLimits{PerAgent: 2, Total: 3, MinLead: time.Minute, Horizon: 24 * time.Hour, Grace: time.Hour}
	set := tool(scheduler.ReminderManifest(pool, limits), "reminder.set")
	if set.Spec().Tier != plugins.TierAuto {
		t.Fatal("reminder.set must be auto")
	}
	now := time.Now().UTC().Truncate(time.Second)
	try := func(agent string, at time.Time) plugins.Result {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"at": at.Format(time.RFC3339), "note": "pay the card before midnight"})
		res, err := set.Execute(ctx, plugins.Call{Tool: "reminder.set", Agent: agent, Args: args, Now: now}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if r := try("a", now.Add(10*time.Second)); !r.IsError || !strings.Contains(r.Text, "lead") {
		t.Fatalf("too soon: %+v", r)
	}
	if r := try("a", now.Add(48*time.Hour)); !r.IsError || !strings.Contains(r.Text, "ahead") {
		t.Fatalf("too far: %+v", r)
	}
	for _, at := range []time.Duration{2 * time.Minute, 3 * time.Hour} {
		if r := try("a", now.Add(at)); r.IsError {
			t.Fatal(r.Text)
		}
	}
	if r := try("a", now.Add(time.Hour)); !r.IsError || !strings.Contains(r.Text, "most an agent may") {
		t.Fatalf("past the per-agent limit: %+v", r)
	}
	if r := try("b", now.Add(time.Hour)); r.IsError {
		t.Fatal(r.Text)
	}
	if r := try("c", now.Add(time.Hour)); !r.IsError || !strings.Contains(r.Text, "most buddi keeps") {
		t.Fatalf("past the total: %+v", r)
	}
	// Due ones fire (each wakes its agent once); one past its grace expires instead.
	var woke []string
	wake := func(ctx context.Context, r scheduler.Reminder, claim conversation.Claim) (string, error) {
		woke = append(woke, r.Agent+":"+r.Note)
		return "run-" + r.Agent, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return claim(ctx, tx, "run-"+r.Agent) })
	}
	fired, expired, err := scheduler.FireReminders(ctx, pool, limits, now.Add(61*time.Minute), wake)
	if err != nil || fired != 2 || expired != 0 {
		t.Fatalf("at +61m: fired %d expired %d (%v), woke %v", fired, expired, err, woke)
	}
	fired, expired, err = scheduler.FireReminders(ctx, pool, limits, now.Add(5*time.Hour), wake)
	if err != nil || fired != 0 || expired != 1 {
		t.Fatalf("at +5h the 3h one is past its grace: fired %d expired %d (%v)", fired, expired, err)
	}
	all, _ := scheduler.Reminders(ctx, pool, "", true)
	states := map[string]int{}
	for _, r := range all {
		states[r.State]++
	}
	if states["fired"] != 2 || states["expired"] != 1 {
		t.Fatalf("states: %v", states)
	}
	if err := scheduler.CancelReminder(ctx, pool, all[0].ID); err == nil {
		t.Fatal("cancelled a reminder that is no longer pending")
	}
	l, err := scheduler.ReminderLimitsFromEnv(func(k string) string {
		return map[string]string{"BUDDI_REMINDER_GRACE": "30m", "BUDDI_REMINDER_PER_AGENT": "5"}[k]
	})
	if err != nil || l.Grace != 30*time.Minute || l.PerAgent != 5 || l.Total != 100 {
		t.Fatalf("limits from the environment: %+v %v", l, err)
	}
	if _, err := scheduler.ReminderLimitsFromEnv(func(k string) string { return map[string]string{"BUDDI_REMINDER_HORIZON": "soon"}[k] }); err == nil {
		t.Fatal("a bad horizon was accepted")
	}
}
