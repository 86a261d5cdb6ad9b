package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"buddi/scheduler"
)

type remindersCmd struct {
	List   remindersListCmd   `cmd:"" default:"withargs" help:"List pending reminders (every one with --all), and the limits."`
	Cancel remindersCancelCmd `cmd:"" help:"Cancel a pending reminder."`
}

type remindersListCmd struct {
	Agent string `help:"Only this agent's (handle or id)."`
	All   bool   `help:"Also fired, expired and cancelled ones."`
	JSON  bool   `help:"Print JSON: {\"reminders\":[…],\"limits\":{…}}."`
}

func (c remindersListCmd) Run(env *runEnv) error {
	agent := ""
	if c.Agent != "" {
		id, err := agentID(c.Agent)
		if err != nil {
			return err
		}
		agent = id
	}
	limits, err := scheduler.ReminderLimitsFromEnv(os.Getenv)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	rs, err := scheduler.Reminders(env.ctx, src.Pool, agent, c.All)
	if err != nil {
		return err
	}
	if rs == nil {
		rs = []scheduler.Reminder{}
	}
	names := loadHandles()
	if c.JSON {
		list, err := names.annotate(rs)
		if err != nil {
			return err
		}
		return writeJSON(env, map[string]any{"reminders": list, "limits": limits})
	}
	if len(rs) == 0 {
		fmt.Fprintln(env.stdout, "No reminders.")
	} else {
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tAGENT\tDUE\tSTATE\tNOTE")
		for _, r := range rs {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", r.ID, names.of(r.Agent), r.DueAt.Local().Format("Mon Jan 2 15:04"), r.State, firstWords(r.Note, 12))
		}
		_ = tw.Flush()
	}
	fmt.Fprintf(env.stdout, "Limits: %d pending per agent, %d in all, at least %s ahead, at most %s ahead, expired %s after it was due (BUDDI_REMINDER_*).\n",
		limits.PerAgent, limits.Total, limits.MinLead, limits.Horizon, limits.Grace)
	return nil
}

type remindersCancelCmd struct {
	ID   int64 `arg:"" help:"The reminder's id."`
	JSON bool  `name:"json" help:"Print JSON: {\"ok\",\"id\"}."`
}

func (c remindersCancelCmd) Run(env *runEnv) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	if err := scheduler.CancelReminder(env.ctx, src.Pool, c.ID); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("%v: `buddi reminders` lists the pending ones", err)}
	}
	return report(env, c.JSON, acted(map[string]any{"id": c.ID}), "reminder %d cancelled", c.ID)
}
