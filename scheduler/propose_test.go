package scheduler_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/scheduler"
)

func tool(m plugins.Manifest, name string) plugins.Tool {
	for _, t := range m.Tools {
		if t.Spec().Name == name {
			return t
		}
	}
	return nil
}

func TestScheduleProposeAndCancel(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := scheduler.ScheduleManifest(pool)
	propose, cancel := tool(m, "schedule.propose"), tool(m, "schedule.cancel_mine")
	if propose.Spec().Tier != plugins.TierGated || cancel.Spec().Tier != plugins.TierAuto {
		t.Fatal("propose must be gated and cancel_mine auto")
	}
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	call := func(args string) plugins.Call {
		return plugins.Call{Tool: "schedule.propose", Agent: "developer", Args: json.RawMessage(args), Now: now}
	}
	for _, bad := range []string{
		`{"cron":"*/30 * * * *","prompt":"check","stop_when":"done"}`,                     // twice an hour
		`{"cron":"0 9 * * 8","prompt":"check","stop_when":"done"}`,                        // not a cron
		`{"cron":"0 9 * * *","prompt":"check","stop_when":"done","ends_on":"2026-01-01"}`, // past
	} {
		if _, err := propose.Describe(ctx, call(bad)); err == nil {
			t.Errorf("%s was described", bad)
		}
	}
	good := call(`{"cron":"0 9 * * 1-5","timezone":"Europe/Berlin","prompt":"Check the CI of the branch.","stop_when":"the branch is merged","ends_on":"2026-12-31"}`)
	env, err := propose.Describe(ctx, good)
	if err != nil {
		t.Fatal(err)
	}
	// 10:00 UTC is 11:00 in Berlin: today's 09:00 is past, so the next three are the
	// following weekdays.
	for _, want := range []string{"Check the CI of the branch.", "weekdays at 09:00", "Tue Dec 1 09:00, Wed Dec 2 09:00, Thu Dec 3 09:00", "the branch is merged", "Thu Dec 31 2026"} {
		if !strings.Contains(env.Preview, want) {
			t.Errorf("the preview lacks %q:\n%s", want, env.Preview)
		}
	}
	res, err := propose.Execute(ctx, good, &env)
	if err != nil || !strings.Contains(res.Text, "schedule.cancel_mine") {
		t.Fatalf("execute: %+v %v", res, err)
	}
	st := &scheduler.Store{Pool: pool}
	ms, _ := st.List(ctx)
	if len(ms) != 1 || ms[0].Agent != "developer" || ms[0].Source != "agent" || ms[0].AlwaysDeliver || ms[0].EndsOn == nil {
		t.Fatalf("the mission: %+v", ms)
	}
	// Another agent cannot end it; its own agent can.
	other := plugins.Call{Tool: "schedule.cancel_mine", Agent: "concierge", Args: json.RawMessage(`{"mission_id":1}`)}
	if r, _ := cancel.Execute(ctx, other, nil); !r.IsError {
		t.Fatal("another agent ended the mission")
	}
	mine := other
	mine.Agent = "developer"
	if r, err := cancel.Execute(ctx, mine, nil); err != nil || r.IsError {
		t.Fatalf("cancel_mine: %+v %v", r, err)
	}
	if m, _ := st.Get(ctx, 1); m.Enabled {
		t.Fatal("the mission is still on")
	}
}

// Past its last day an agent's mission ends quietly, and stays listed.
func TestAgentMissionEnds(t *testing.T) {
	ctx := context.Background()
	st := &scheduler.Store{Pool: pgtest.Pool(t)}
	end := time.Now().Add(time.Hour)
	m, err := st.Add(ctx, scheduler.Mission{Name: "watch", Agent: "developer", Prompt: "p", Cron: "0 * * * *", Source: "agent", StopWhen: "done", EndsOn: &end})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Materialise(ctx, end.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, _ := st.Get(ctx, m.ID)
	if got.Enabled {
		t.Fatal("a mission past its end is still on")
	}
	if err := st.SetEnabled(ctx, m.ID, true, end.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Get(ctx, m.ID); !got.Enabled || got.EndsOn != nil {
		t.Fatalf("switched back on, the end should be dropped: %+v", got)
	}
}
