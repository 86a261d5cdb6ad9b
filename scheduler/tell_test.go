package scheduler_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"buddi/core/conversation"
	"buddi/core/notify"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/scheduler"
)

// pushes records what reached the owner's phone.
type pushes struct {
	mu   sync.Mutex
	rows []notify.Row
}

func (p *pushes) Push(_ context.Context, r notify.Row) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rows = append(p.rows, r)
	return nil
}

func (p *pushes) keys() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, r := range p.rows {
		out = append(out, r.Key)
	}
	return out
}

// A mission's delivered report, and the "Still useful?" question after its 48th silent run,
// reach the owner through notifyOwner (the owner away: pushed to the phone), each once: a
// report told again by a rerun of its tool is not pushed twice.
func TestReportsAndStillUsefulAreToldToTheOwner(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	phone := &pushes{}
	n := &notify.Notifier{Pool: pool, Phone: phone}
	tell := func(ctx context.Context, notice notify.Notice) {
		if _, err := n.Owner(ctx, notice); err != nil {
			t.Errorf("tell %s: %v", notice.Key, err)
		}
	}
	st := &scheduler.Store{Pool: pool}
	m, err := st.Add(ctx, scheduler.Mission{Name: "watch", Agent: "concierge", Prompt: "look", Cron: "0 8 * * *", Timezone: "UTC", Misfire: scheduler.Coalesce})
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	w := &scheduler.OccurrenceWorker{Store: st, Start: func(ctx context.Context, _ scheduler.Mission, _ scheduler.Occurrence, _ string, claim conversation.Claim) (string, error) {
		runs++
		runID := "run-" + strconv.Itoa(runs)
		return runID, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return claim(ctx, tx, runID) })
	}}
	runOnce := func() string {
		t.Helper()
		occ, err := st.RunNow(ctx, m.ID, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Work(ctx, &river.Job[scheduler.OccurrenceArgs]{JobRow: &rivertype.JobRow{}, Args: scheduler.OccurrenceArgs{OccurrenceID: occ}}); err != nil {
			t.Fatal(err)
		}
		return "run-" + strconv.Itoa(runs)
	}
	manifest := scheduler.ManifestTelling(pool, nil, tell)
	report, silent := tool(manifest, "mission.report"), tool(manifest, "mission.silent")

	run := runOnce()
	call := plugins.Call{RunID: run, Agent: "concierge", Args: json.RawMessage(`{"report":"The build is green."}`)}
	if _, err := report.Execute(ctx, call, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Execute(ctx, call, nil); err != nil { // told again: a rerun
		t.Fatal(err)
	}
	if got := phone.keys(); len(got) != 1 || got[0] != "mission.report:"+run {
		t.Fatalf("pushed %v, want the report once", got)
	}

	if _, err := pool.Exec(ctx, `UPDATE core.missions SET quiet_runs = $2 WHERE id = $1`, m.ID, scheduler.StillUsefulAfter-1); err != nil {
		t.Fatal(err)
	}
	run = runOnce()
	if _, err := silent.Execute(ctx, plugins.Call{RunID: run, Agent: "concierge", Args: json.RawMessage(`{}`)}, nil); err != nil {
		t.Fatal(err)
	}
	got := phone.keys()
	if len(got) != 2 || got[1] != "mission.still_useful:"+strconv.FormatInt(m.ID, 10)+":"+run {
		t.Fatalf("pushed %v, want the report, then Still useful?", got)
	}
	list, err := notify.List(ctx, pool, 10)
	if err != nil || len(list) != 2 || list[0].Title != "Still useful?" || list[1].Body != "The build is green." {
		t.Fatalf("the dashboard's notifications: %+v %v", list, err)
	}
}
