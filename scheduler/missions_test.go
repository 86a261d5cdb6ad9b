package scheduler_test

import (
	"context"
	"testing"
	"time"

	"buddi/internal/pgtest"
	"buddi/scheduler"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// states counts a mission's occurrences by state, and the runs owed in total covers.
func states(t *testing.T, st *scheduler.Store, id int64) (map[string]int, int) {
	t.Helper()
	occ, err := st.Occurrences(context.Background(), id, 100000)
	if err != nil {
		t.Fatal(err)
	}
	out, covers := map[string]int{}, 0
	for _, o := range occ {
		out[o.State]++
		if o.State == "pending" {
			covers += o.Covers
		}
	}
	return out, covers
}

// A machine that slept a week owes what the policy says, not a week of briefings; a second
// pass (a restart) writes nothing more.
func TestCatchUpAfterAWeekAsleep(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	st := &scheduler.Store{Pool: pool}
	created := time.Now().Add(-8 * 24 * time.Hour)
	tests := []struct{ policy string }{{scheduler.ReplayAll}, {scheduler.Coalesce}, {scheduler.LatestOnly}, {scheduler.SkipAfterDeadline}}
	for _, tt := range tests {
		m, err := st.Add(ctx, scheduler.Mission{Name: tt.policy, Agent: "concierge", Prompt: "Brief me.", Cron: "0 9 * * *", Timezone: "Europe/Berlin", Misfire: tt.policy})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `UPDATE core.missions SET created_at = $2 WHERE id = $1`, m.ID, created); err != nil {
			t.Fatal(err)
		}
		// Woken on the eighth day at 09:30 Berlin time: seven or eight 09:00s have passed, all missed.
		berlin, _ := time.LoadLocation("Europe/Berlin")
		wake := time.Now().In(berlin)
		wake = time.Date(wake.Year(), wake.Month(), wake.Day(), 9, 30, 0, 0, berlin)
		if wake.After(time.Now()) {
			wake = wake.AddDate(0, 0, -1)
		}
		if _, _, err := st.Materialise(ctx, wake); err != nil {
			t.Fatal(err)
		}
		got, covers := states(t, st, m.ID)
		total := got["pending"] + got["skipped"]
		if total < 7 || total > 8 {
			t.Fatalf("%s: %v occurrences, want a week's", tt.policy, got)
		}
		switch tt.policy {
		case scheduler.ReplayAll:
			if got["pending"] != total {
				t.Errorf("replay-all: %v", got)
			}
		case scheduler.Coalesce:
			if got["pending"] != 1 || covers != total {
				t.Errorf("coalesce: %v, the run stands for %d", got, covers)
			}
		case scheduler.LatestOnly:
			if got["pending"] != 1 || covers != 1 {
				t.Errorf("latest-only: %v", got)
			}
		case scheduler.SkipAfterDeadline:
			// Today's 09:00 is 30 minutes late, within the hour; the others are past it.
			if got["pending"] != 1 || got["skipped"] != total-1 {
				t.Errorf("skip-after-deadline (1 h): %v", got)
			}
		}
		// A restart materialises again: nothing new.
		if w, _, err := st.Materialise(ctx, wake); err != nil || w != 0 {
			t.Fatalf("%s: a second pass wrote %d (%v)", tt.policy, w, err)
		}
		// Switched off, nothing more; on again, what was missed meanwhile is not owed.
		if err := st.SetEnabled(ctx, m.ID, false, wake); err != nil {
			t.Fatal(err)
		}
		if w, _, _ := st.Materialise(ctx, wake.Add(48*time.Hour)); w != 0 {
			t.Fatalf("%s: a disabled mission materialised %d", tt.policy, w)
		}
		if err := st.SetEnabled(ctx, m.ID, true, wake.Add(48*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if w, _, _ := st.Materialise(ctx, wake.Add(48*time.Hour+time.Minute)); w != 0 {
			t.Fatalf("%s: re-enabling owed %d old instants", tt.policy, w)
		}
	}
}

// On time is on time: an instant within the grace is owed as itself, under every policy.
func TestOnTime(t *testing.T) {
	ctx := context.Background()
	st := &scheduler.Store{Pool: pgtest.Pool(t)}
	m, err := st.Add(ctx, scheduler.Mission{Name: "hourly", Agent: "concierge", Prompt: "Check.", Cron: "0 * * * *", Misfire: scheduler.LatestOnly})
	if err != nil {
		t.Fatal(err)
	}
	hour := time.Now().Truncate(time.Hour).Add(time.Hour)
	if err := st.SetEnabled(ctx, m.ID, true, hour.Add(-30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	w, owed, err := st.Materialise(ctx, hour.Add(time.Minute))
	if err != nil || w != 1 || owed != 1 {
		t.Fatalf("on time: wrote %d owed %d (%v)", w, owed, err)
	}
	if _, err := st.Add(ctx, scheduler.Mission{Name: "bad", Agent: "a", Prompt: "x", Cron: "0 9 * * *", Misfire: "sometimes"}); err == nil {
		t.Fatal("an unknown misfire policy was accepted")
	}
}
