package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// An every-minute coalesce mission on a buddi that was stopped across three and a half
// minutes runs once on waking, for every instant it missed; a second stop and start while
// the run goes on runs no instant again. The sleep is real stops and starts of the binary
// with work paused between them, and the mission's start moved back by the length of the
// sleep (the materialiser's only memory of time is the rows).
func TestCoalesceAfterAStopIsOneRun(t *testing.T) {
	// The mission's agent has no account, so a run it starts calls no model (and a minute that
	// comes on time while the test goes on costs nothing): a run counts when it starts, its
	// occurrence claimed with the run's id.
	_, s, vars, home := scriptedServeAt(t)
	if code, out, errOut := runBuddi(t, vars, time.Minute, "pause"); code != 0 {
		t.Fatalf("pause: %d %s%s", code, out, errOut)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "missions", "add", "--agent", "concierge", "--cron", "* * * * *",
		"--misfire", "coalesce", "--prompt", "Check the workspace."); code != 0 || !strings.Contains(out, "mission 1 added") {
		t.Fatalf("missions add: %d %s%s", code, out, errOut)
	}
	ctx := context.Background()
	conn := dbConn(t, home)
	if _, err := conn.Exec(ctx, `UPDATE core.missions SET created_at = now() - interval '3 minutes 30 seconds' WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if code := s.stop(); code != 0 {
		t.Fatalf("buddi serve exited %d on SIGTERM", code)
	}

	s = startServe(t, home, s.port, vars)
	s.health()
	conn = dbConn(t, home)
	resumed := time.Now()
	if code, out, errOut := runBuddi(t, vars, time.Minute, "resume"); code != 0 {
		t.Fatalf("resume: %d %s%s", code, out, errOut)
	}
	settled(t, conn, resumed)

	type occ struct {
		instant time.Time
		state   string
		covers  int
		runID   string
	}
	list := func() []occ {
		rows, err := conn.Query(ctx, `SELECT instant, state, covers, run_id FROM core.occurrences WHERE mission_id = 1 ORDER BY instant`)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (occ, error) {
			var o occ
			err := r.Scan(&o.instant, &o.state, &o.covers, &o.runID)
			return o, err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// The first run stands for every instant before it, and they were all skipped. (A run
	// after it is a minute that came while the test went on: on time, not missed.)
	all := list()
	first := -1
	for i, o := range all {
		if o.runID != "" {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatalf("no occurrence ran: %+v", all)
	}
	for _, o := range all[:first] {
		if o.state != "skipped" {
			t.Fatalf("a missed instant was owed apart from the coalesced run: %+v", all)
		}
	}
	if all[first].covers != first+1 || all[first].covers < 3 {
		t.Fatalf("the run at %s stands for %d instants; %d were missed: %+v", all[first].instant, all[first].covers, first+1, all)
	}

	// Stopped and started again in the middle: nothing runs twice.
	if code := s.stop(); code != 0 {
		t.Fatalf("buddi serve exited %d on SIGTERM", code)
	}
	conn.Close(ctx)
	restarted := time.Now()
	s = startServe(t, home, s.port, vars)
	s.health()
	conn = dbConn(t, home)
	settled(t, conn, restarted)
	var twice int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT payload->>'occurrence_id' FROM core.events
		WHERE kind = 'mission.started' GROUP BY 1 HAVING count(*) > 1) d`).Scan(&twice); err != nil || twice != 0 {
		t.Fatalf("%d occurrences started twice (%v)", twice, err)
	}
	var runs int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM core.occurrences WHERE mission_id = 1 AND run_id <> '' AND instant <= $1`,
		all[first].instant).Scan(&runs); err != nil || runs != 1 {
		t.Fatalf("the missed instants ran %d times (%v): %+v", runs, err, list())
	}
}

// settled waits until a materialising pass finished after since and no occurrence's job is
// left to run.
func settled(t *testing.T, conn *pgx.Conn, since time.Time) {
	t.Helper()
	waitFor(t, "a materialising pass and its occurrences' jobs", 2*time.Minute, func() bool {
		var passes, waiting int
		err := conn.QueryRow(context.Background(), `SELECT
			count(*) FILTER (WHERE kind = 'mission.materialise' AND state = 'completed' AND finalized_at > $1),
			count(*) FILTER (WHERE kind = 'mission.occurrence' AND state IN ('available', 'running', 'retryable', 'scheduled', 'pending'))
			FROM river.river_job`, since).Scan(&passes, &waiting)
		return err == nil && passes > 0 && waiting == 0
	})
}
