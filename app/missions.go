package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"buddi/core/conversation"
	"buddi/runtime/run"
	"buddi/scheduler"
)

// missionStarter starts an occurrence's run: a conversation of its own, the mission's prompt
// as its first turn, run unattended (the long retry horizon; nobody is waiting).
func missionStarter(convs *conversation.Store, runner *run.Runner) scheduler.Starter {
	return func(ctx context.Context, m scheduler.Mission, o scheduler.Occurrence, extra string, claim conversation.Claim) (string, error) {
		agent := m.Agent
		if role, ok := strings.CutPrefix(agent, "role:"); ok { // a role is resolved at each run
			cat, err := runner.Catalog()
			if err != nil {
				return "", err
			}
			holder, err := cat.ForRole(role)
			if err != nil {
				return "", err
			}
			agent = holder.ID
		}
		text := fmt.Sprintf("Mission %d, %q, scheduled for %s (%s).", m.ID, m.Name, o.Instant.In(loadZone(m.Timezone)).Format("Mon Jan 2 15:04"), m.Timezone)
		if o.Covers > 1 {
			text += fmt.Sprintf(" This run stands for %d instants that were missed while buddi was not running.", o.Covers)
		}
		if m.Source == "agent" {
			text += fmt.Sprintf(" It is your own standing schedule; it stops when: %s. When that goal is met or moot, call schedule.cancel_mine with mission_id %d and say so once.", m.StopWhen, m.ID)
		}
		text += "\n\n" + m.Prompt
		if extra != "" {
			text += "\n\n" + extra
		}
		sent, err := convs.StartDetached(ctx, agent, text, runner.StartNext(run.Meta{Interactive: false}), claim)
		if err != nil {
			return "", err
		}
		return sent.RunID, nil
	}
}

func loadZone(tz string) *time.Location {
	if loc, err := time.LoadLocation(tz); err == nil {
		return loc
	}
	return time.UTC
}

// reminderWaker wakes the agent of a due reminder, unattended, in a conversation of its own.
func reminderWaker(convs *conversation.Store, runner *run.Runner) scheduler.Waker {
	return func(ctx context.Context, r scheduler.Reminder, claim conversation.Claim) (string, error) {
		text := fmt.Sprintf("Reminder %d, which you set for %s: %s\n\nCheck with your tools that this is still true and still matters. "+
			"Then report it in a few sentences (mission.report), or stay silent with a reason (mission.silent).", r.ID, r.DueAt.Format(time.RFC1123), r.Note)
		sent, err := convs.StartDetached(ctx, r.Agent, text, runner.StartNext(run.Meta{Interactive: false}), claim)
		if err != nil {
			return "", err
		}
		return sent.RunID, nil
	}
}
