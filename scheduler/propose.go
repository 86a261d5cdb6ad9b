package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/plugins"
)

// ScheduleManifest is the tools an agent schedules with (seed 004, "Reminders and
// agent-proposed schedules"): schedule.propose is gated (a standing schedule costs model calls
// indefinitely, and the owner did not type it); schedule.list_mine and schedule.cancel_mine are
// auto (an agent may always take its own foot off the pedal).
func ScheduleManifest(pool *pgxpool.Pool) plugins.Manifest {
	st := &Store{Pool: pool}
	return plugins.Manifest{Name: "schedule", Version: "1", Description: "Standing schedules an agent proposes and ends.",
		Tools: []plugins.Tool{proposeTool{st}, listMineTool{st}, cancelMineTool{st}}}
}

// DefaultAgentMissionLife is how long an agent's mission runs when it names no last day.
const DefaultAgentMissionLife = 30 * 24 * time.Hour

type proposal struct {
	Name     string `json:"name"`
	Cron     string `json:"cron"`
	Timezone string `json:"timezone"`
	Prompt   string `json:"prompt"`
	StopWhen string `json:"stop_when"`
	EndsOn   string `json:"ends_on"`
}

type proposeTool struct{ st *Store }

func (proposeTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: "schedule.propose",
		Description: "Propose a standing schedule: you are run with the instruction on the cron schedule until it ends. The owner approves it on a card. " +
			"Nothing more frequent than hourly. Say when it is done (stop_when) and its last day (ends_on, default 30 days on).",
		Schema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["cron","prompt","stop_when"],"properties":{
			"name":{"type":"string","maxLength":80},
			"cron":{"type":"string","minLength":9,"maxLength":100,"description":"Five fields: minute hour day month weekday."},
			"timezone":{"type":"string","maxLength":64,"description":"IANA zone; default the owner's (UTC when unknown)."},
			"prompt":{"type":"string","minLength":1,"maxLength":2000,"description":"The exact instruction you will be run with."},
			"stop_when":{"type":"string","minLength":1,"maxLength":400,"description":"Your words for done."},
			"ends_on":{"type":"string","pattern":"^\\d{4}-\\d{2}-\\d{2}$","description":"The last day, YYYY-MM-DD, in the owner's zone."}}}`),
		Effects: []plugins.Effect{plugins.EffectStateWrite}, Tier: plugins.TierGated, Timeout: 10 * time.Second,
	}
}

// parse reads and checks a proposal: a schedule that parses, nothing more frequent than
// hourly, an end that is in the future.
func (t proposeTool) parse(call plugins.Call) (proposal, Schedule, time.Time, error) {
	var p proposal
	if err := json.Unmarshal(call.Args, &p); err != nil {
		return p, Schedule{}, time.Time{}, err
	}
	if p.Timezone == "" {
		p.Timezone = t.st.OwnerZone()
	}
	s, err := Parse(p.Cron, p.Timezone)
	if err != nil {
		return p, s, time.Time{}, err
	}
	now := call.Now
	if now.IsZero() {
		now = time.Now()
	}
	next := s.Between(now, now.AddDate(0, 0, 8), 200)
	for i := 1; i < len(next); i++ {
		if next[i].Sub(next[i-1]) < time.Hour {
			return p, s, time.Time{}, fmt.Errorf("the schedule %q runs more often than hourly, which is not accepted", p.Cron)
		}
	}
	if len(next) == 0 {
		return p, s, time.Time{}, fmt.Errorf("the schedule %q never runs in the coming week", p.Cron)
	}
	ends := now.Add(DefaultAgentMissionLife)
	if p.EndsOn != "" {
		day, err := time.ParseInLocation("2006-01-02", p.EndsOn, s.Loc)
		if err != nil {
			return p, s, time.Time{}, fmt.Errorf("ends_on %q is not a day (YYYY-MM-DD)", p.EndsOn)
		}
		ends = day.AddDate(0, 0, 1) // through the end of that day
		if !ends.After(now) {
			return p, s, time.Time{}, fmt.Errorf("ends_on %s is already past", p.EndsOn)
		}
	}
	if p.Name == "" {
		p.Name = strings.Join(strings.Fields(p.Prompt)[:min(6, len(strings.Fields(p.Prompt)))], " ")
	}
	return p, s, ends, nil
}

// Describe previews the whole grant: the cadence in words with the next three instants in the
// zone, the exact instruction, when it stops and its last day. An unparseable or too frequent
// schedule is refused here, before any card.
func (t proposeTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	p, s, ends, err := t.parse(call)
	if err != nil {
		return plugins.Envelope{}, err
	}
	now := call.Now
	if now.IsZero() {
		now = time.Now()
	}
	preview := fmt.Sprintf("Run %s with this instruction:\n  %s\nWhen: %s (%s; cron %q); the next three: %s.\nStops when: %s\nLast day: %s.",
		call.Agent, p.Prompt, s.Words(), s.Loc, p.Cron, s.nextThree(now), p.StopWhen, ends.Add(-time.Second).In(s.Loc).Format("Mon Jan 2 2006"))
	return plugins.Envelope{Summary: fmt.Sprintf("A standing schedule for %s: %s", call.Agent, p.Name),
		Effects: []plugins.Effect{plugins.EffectStateWrite}, Preview: preview}, nil
}

// Execute writes the mission, with the agent taken from the action and always_deliver false.
func (t proposeTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	p, _, ends, err := t.parse(call)
	if err != nil {
		return plugins.Result{}, err
	}
	m, err := t.st.Add(ctx, Mission{Name: p.Name, Agent: call.Agent, Prompt: p.Prompt, Cron: p.Cron, Timezone: p.Timezone,
		Misfire: Coalesce, Source: "agent", StopWhen: p.StopWhen, EndsOn: &ends})
	if err != nil {
		return plugins.Result{}, err
	}
	return plugins.Result{Text: fmt.Sprintf("Mission %d is scheduled. When %s, call schedule.cancel_mine with its id and say so once.", m.ID, p.StopWhen)}, nil
}

type listMineTool struct{ st *Store }

func (listMineTool) Spec() plugins.Spec {
	return plugins.Spec{Name: "schedule.list_mine", Description: "List the standing schedules you proposed that are still on.",
		Schema: json.RawMessage(`{"type":"object","additionalProperties":false}`), Effects: []plugins.Effect{plugins.EffectRead},
		Tier: plugins.TierAuto, Timeout: 10 * time.Second}
}

func (listMineTool) Describe(context.Context, plugins.Call) (plugins.Envelope, error) {
	return plugins.Envelope{Summary: "List my schedules"}, nil
}

func (t listMineTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	ms, err := t.st.List(ctx)
	if err != nil {
		return plugins.Result{}, err
	}
	var b strings.Builder
	for _, m := range ms {
		if m.Agent == call.Agent && m.Source == "agent" && m.Enabled {
			fmt.Fprintf(&b, "Mission %d, %q: %s (%s); stops when %s.\n", m.ID, m.Name, m.Cron, m.Timezone, m.StopWhen)
		}
	}
	if b.Len() == 0 {
		return plugins.Result{Text: "You have no standing schedules."}, nil
	}
	return plugins.Result{Text: b.String()}, nil
}

type cancelMineTool struct{ st *Store }

func (cancelMineTool) Spec() plugins.Spec {
	return plugins.Spec{Name: "schedule.cancel_mine", Description: "End one of your own standing schedules (its goal is met, or moot).",
		Schema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["mission_id"],"properties":{"mission_id":{"type":"integer","minimum":1}}}`),
		Effects: []plugins.Effect{plugins.EffectStateWrite}, Tier: plugins.TierAuto, Timeout: 10 * time.Second}
}

func (cancelMineTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	return plugins.Envelope{Summary: "End my schedule " + string(call.Args)}, nil
}

func (t cancelMineTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a struct {
		MissionID int64 `json:"mission_id"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Result{}, err
	}
	tag, err := t.st.Pool.Exec(ctx, `UPDATE core.missions SET enabled = false, ended_at = now()
		WHERE id = $1 AND agent = $2 AND source = 'agent' AND enabled`, a.MissionID, call.Agent)
	if err != nil {
		return plugins.Result{}, err
	}
	if tag.RowsAffected() == 0 {
		return plugins.Result{Text: fmt.Sprintf("Mission %d is not one of your schedules (or already ended).", a.MissionID), IsError: true}, nil
	}
	if _, err := eventlog.Append(ctx, t.st.Pool, events.MissionEnded, "", events.MissionEndedPayload{MissionID: a.MissionID, By: call.Agent}); err != nil {
		return plugins.Result{}, err
	}
	return plugins.Result{Text: fmt.Sprintf("Mission %d has ended.", a.MissionID)}, nil
}
