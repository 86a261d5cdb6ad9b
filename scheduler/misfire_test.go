package scheduler_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"buddi/core/conversation"
	"buddi/internal/pgtest"
	"buddi/internal/timezone"
	"buddi/plugins"
	"buddi/scheduler"
)

// queued records the jobs the store enqueues, as River would hold them.
type queued struct {
	mu  sync.Mutex
	ids []int64
}

func (q *queued) InsertTx(_ context.Context, _ pgx.Tx, args river.JobArgs, _ *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ids = append(q.ids, args.(scheduler.OccurrenceArgs).OccurrenceID)
	return &rivertype.JobInsertResult{}, nil
}

// take returns the jobs enqueued so far and forgets them.
func (q *queued) take() []int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.ids
	q.ids = nil
	return out
}

// starts counts the runs a worker started, per occurrence, claiming each as buddi does (in
// the transaction that starts the run).
type starts struct {
	mu  sync.Mutex
	n   int
	per map[int64]int
}

func (s *starts) starter(pool *pgxpool.Pool) scheduler.Starter {
	return func(ctx context.Context, _ scheduler.Mission, o scheduler.Occurrence, _ string, claim conversation.Claim) (string, error) {
		s.mu.Lock()
		s.n++
		runID := fmt.Sprintf("run-%d", s.n)
		s.mu.Unlock()
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return claim(ctx, tx, runID) }); err != nil {
			return "", err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.per == nil {
			s.per = map[int64]int{}
		}
		s.per[o.ID]++
		return runID, nil
	}
}

func (s *starts) count() (total int, twice []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, n := range s.per {
		total += n
		if n > 1 {
			twice = append(twice, id)
		}
	}
	return total, twice
}

// work runs the jobs of ids with the worker's clock at now, as River would.
func work(t *testing.T, w *scheduler.OccurrenceWorker, ids []int64) {
	t.Helper()
	for _, id := range ids {
		job := &river.Job[scheduler.OccurrenceArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 3}, Args: scheduler.OccurrenceArgs{OccurrenceID: id}}
		if err := w.Work(context.Background(), job); err != nil {
			t.Fatalf("occurrence %d: %v", id, err)
		}
	}
}

// addEveryMinute adds an every-minute mission under policy whose instants are materialised up
// to mark.
func addEveryMinute(t *testing.T, st *scheduler.Store, policy string, deadline time.Duration, mark time.Time) scheduler.Mission {
	t.Helper()
	ctx := context.Background()
	m, err := st.Add(ctx, scheduler.Mission{Name: policy, Agent: "concierge", Prompt: "Check.", Cron: "* * * * *", Misfire: policy, Deadline: deadline})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetEnabled(ctx, m.ID, true, mark); err != nil {
		t.Fatal(err)
	}
	return m
}

// The finding: a machine asleep across three instants of an every-minute coalesce mission
// ran two of them on waking, because the two most recent were both within the grace. The
// policy promises one run for every instant missed, however many of them were recent.
func TestCoalesceAcrossThreeInstantsIsOneRun(t *testing.T) {
	ctx := context.Background()
	st := &scheduler.Store{Pool: pgtest.Pool(t)}
	asleep := time.Now().Truncate(time.Minute).Add(10 * time.Second)
	m := addEveryMinute(t, st, scheduler.Coalesce, 0, asleep)
	// Awake 3m20s later: instants 2m30s, 1m30s and 30s ago were missed.
	if _, _, err := st.Materialise(ctx, asleep.Add(3*time.Minute+10*time.Second)); err != nil {
		t.Fatal(err)
	}
	got, covers := states(t, st, m.ID)
	if got["pending"] != 1 || got["skipped"] != 2 || covers != 3 {
		t.Fatalf("coalesce over three instants: %v, the runs stand for %d; want one run standing for 3", got, covers)
	}
}

// Every misfire policy keeps its promise across a gap longer than one pass materialises
// (MaxPerMaterialise instants): replay-all runs each instant once, coalesce runs once for
// all of them, latest-only runs only the latest, skip-after-deadline only those within its
// deadline. Passes repeated at the same moment (a restart) owe nothing more.
func TestEveryPolicyAcrossALongGap(t *testing.T) {
	ctx := context.Background()
	st := &scheduler.Store{Pool: pgtest.Pool(t)}
	asleep := time.Now().Truncate(time.Minute).Add(10 * time.Second)
	gap := scheduler.MaxPerMaterialise + 2500 // instants, one a minute
	wake := asleep.Add(time.Duration(gap)*time.Minute + 20*time.Second)
	for _, policy := range []string{scheduler.ReplayAll, scheduler.Coalesce, scheduler.LatestOnly, scheduler.SkipAfterDeadline} {
		m := addEveryMinute(t, st, policy, time.Hour, asleep)
		for range 4 {
			if _, _, err := st.Materialise(ctx, wake); err != nil {
				t.Fatal(err)
			}
		}
		got, covers := states(t, st, m.ID)
		if n := got["pending"] + got["skipped"]; n != gap {
			t.Fatalf("%s: %d instants materialised, want %d", policy, n, gap)
		}
		want := map[string][2]int{ // pending occurrences, instants they stand for
			scheduler.ReplayAll:         {gap, gap},
			scheduler.Coalesce:          {1, gap},
			scheduler.LatestOnly:        {1, 1},
			scheduler.SkipAfterDeadline: {60, 60}, // the hour before waking
		}[policy]
		if got["pending"] != want[0] || covers != want[1] {
			t.Errorf("%s across %d instants: %v, standing for %d; want %d runs standing for %d", policy, gap, got, covers, want[0], want[1])
		}
		if policy == scheduler.Coalesce || policy == scheduler.LatestOnly {
			occ, _ := st.Occurrences(ctx, m.ID, 1)
			if len(occ) != 1 || occ[0].State != "pending" || wake.Sub(occ[0].Instant) > time.Minute {
				t.Errorf("%s: the run is not the latest instant: %+v", policy, occ)
			}
		}
	}
}

// A restart in the middle of catching up runs no instant twice and keeps each policy's
// promise: an occurrence that was owed when buddi stopped, its job still queued, is one of
// the instants the policy decides about on waking, and every job may run again (River
// reruns a job whose worker died).
func TestRestartWhileCatchingUp(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	for _, policy := range []string{scheduler.ReplayAll, scheduler.Coalesce, scheduler.LatestOnly, scheduler.SkipAfterDeadline} {
		t.Run(policy, func(t *testing.T) {
			q := &queued{}
			st := &scheduler.Store{Pool: pool, Insert: q}
			var s starts
			base := time.Now().Truncate(time.Minute).Add(10 * time.Second)
			m := addEveryMinute(t, st, policy, time.Minute, base)
			// On time at base+1m: the instant at base+50s is owed, its job queued; buddi
			// stops before the job runs.
			if _, owed, err := st.Materialise(ctx, base.Add(time.Minute)); err != nil || owed != 1 {
				t.Fatalf("on time: owed %d (%v)", owed, err)
			}
			before := q.take()
			// Awake 5m30s later. River runs the job left over first, then the periodic pass.
			wake := base.Add(6*time.Minute + 30*time.Second)
			w := &scheduler.OccurrenceWorker{Store: st, Start: s.starter(pool), Now: func() time.Time { return wake }}
			work(t, w, before)
			if _, _, err := st.Materialise(ctx, wake); err != nil {
				t.Fatal(err)
			}
			after := q.take()
			// Half the jobs run, buddi stops again, a pass runs again, and every job runs (again).
			work(t, w, after[:len(after)/2])
			if _, _, err := st.Materialise(ctx, wake.Add(10*time.Second)); err != nil {
				t.Fatal(err)
			}
			all := append(append(append([]int64{}, before...), after...), q.take()...)
			work(t, w, all)
			work(t, w, all)
			total, twice := s.count()
			if len(twice) > 0 {
				t.Fatalf("occurrences started twice: %v", twice)
			}
			// Six instants passed: base+50s (owed on time, never run) and five while asleep.
			want := map[string]int{scheduler.ReplayAll: 6, scheduler.Coalesce: 1, scheduler.LatestOnly: 1, scheduler.SkipAfterDeadline: 1}[policy]
			if total != want {
				t.Errorf("%s: %d runs, want %d", policy, total, want)
			}
			if policy == scheduler.Coalesce {
				occ, _ := st.Occurrences(ctx, m.ID, 100)
				covered := 0
				for _, o := range occ {
					if o.State == "running" {
						covered += o.Covers
					}
				}
				if covered != 6 {
					t.Errorf("coalesce: the run stands for %d instants, want 6: %+v", covered, occ)
				}
			}
		})
	}
}

// A mission that names no zone is in the owner's: in Berlin "0 8 * * *" is 08:00 on the
// wall (07:00 UTC in winter, 06:00 in summer), not 08:00 UTC.
func TestMissionDefaultsToTheOwnersZone(t *testing.T) {
	ctx := context.Background()
	st := &scheduler.Store{Pool: pgtest.Pool(t), Zone: "Europe/Berlin"}
	m, err := st.Add(ctx, scheduler.Mission{Name: "morning", Agent: "concierge", Prompt: "Brief me.", Cron: "0 8 * * *"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Timezone != "Europe/Berlin" {
		t.Fatalf("a mission without a zone is in %q, want the owner's", m.Timezone)
	}
	for _, day := range []time.Time{time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), time.Date(2026, 7, 15, 0, 0, 0, 0, time.UTC)} {
		if err := st.SetEnabled(ctx, m.ID, true, day); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.Materialise(ctx, day.Add(12*time.Hour)); err != nil {
			t.Fatal(err)
		}
		occ, err := st.Occurrences(ctx, m.ID, 1)
		if err != nil || len(occ) != 1 {
			t.Fatalf("%v %v", occ, err)
		}
		berlin := occ[0].Instant.In(timezone.Zone{Name: "Europe/Berlin"}.Location())
		if berlin.Hour() != 8 || berlin.Minute() != 0 {
			t.Errorf("%s: ran at %s Berlin time, want 08:00", day.Format("Jan"), berlin.Format("15:04"))
		}
	}
	// With no zone given the store uses the one found on this machine.
	other, err := (&scheduler.Store{Pool: st.Pool}).Add(ctx, scheduler.Mission{Name: "x", Agent: "concierge", Prompt: "x", Cron: "0 8 * * *"})
	if err != nil || other.Timezone != timezone.Local().Name {
		t.Fatalf("a store without a zone: %q (%v), want %q", other.Timezone, err, timezone.Local().Name)
	}
}

// A reminder without an offset is a wall time in the owner's zone, and the answer says the
// time in it.
func TestReminderInTheOwnersZone(t *testing.T) {
	pool := pgtest.Pool(t)
	set := tool(scheduler.ReminderManifestIn(pool, scheduler.DefaultReminderLimits, "Asia/Tokyo"), "reminder.set")
	if !strings.Contains(string(set.Spec().Schema), "Asia/Tokyo") {
		t.Fatalf("the schema does not name the owner's zone: %s", set.Spec().Schema)
	}
	tokyo := timezone.Zone{Name: "Asia/Tokyo"}.Location()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, tokyo)
	args := []byte(`{"at":"2026-03-02T09:00:00","note":"water the plants"}`)
	res, err := set.Execute(context.Background(), plugins.Call{Tool: "reminder.set", Agent: "a", Args: args, Now: now}, nil)
	if err != nil || res.IsError || !strings.Contains(res.Text, "09:00:00 JST") {
		t.Fatalf("%+v %v", res, err)
	}
	var due time.Time
	if err := pool.QueryRow(context.Background(), `SELECT due_at FROM core.reminders WHERE note = 'water the plants'`).Scan(&due); err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC); !due.Equal(want) {
		t.Fatalf("due at %s, want %s", due.UTC(), want)
	}
}
