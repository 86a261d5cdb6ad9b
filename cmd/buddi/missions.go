package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"buddi/internal/timezone"
	"buddi/queue"
	"buddi/scheduler"
)

type missionsCmd struct {
	List        missionsListCmd        `cmd:"" default:"withargs" help:"List the missions."`
	Add         missionsAddCmd         `cmd:"" help:"Add a mission of your own: a prompt for an agent on a cron schedule."`
	AddDefaults missionsAddDefaultsCmd `cmd:"" name:"add-defaults" help:"Add the missions buddi ships (the weekly recap) when they are missing."`
	RunNow      missionsRunNowCmd      `cmd:"" name:"run-now" help:"Run a mission now, once."`
	Enable      missionsEnableCmd      `cmd:"" help:"Switch a mission on (what it missed while off is not owed)."`
	Disable     missionsDisableCmd     `cmd:"" help:"Switch a mission off."`
	Occurrences missionsOccurrencesCmd `cmd:"" help:"Each materialised instant of a mission, with its state and why."`
}

// missionStore opens the database and the missions over it.
func missionStore(env *runEnv) (*scheduler.Store, func(), error) {
	src, err := openActions(env)
	if err != nil {
		return nil, nil, err
	}
	insert, err := queue.InsertOnly(src.Pool)
	if err != nil {
		closeSource(src)
		return nil, nil, err
	}
	return &scheduler.Store{Pool: src.Pool, Insert: insert}, func() { closeSource(src) }, nil
}

func missionExit(err error) error {
	if errors.Is(err, scheduler.ErrNotFound) {
		return &exitError{code: 1, err: fmt.Errorf("%v: `buddi missions` lists them", err)}
	}
	return err
}

type missionsListCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c missionsListCmd) Run(env *runEnv) error {
	st, done, err := missionStore(env)
	if err != nil {
		return err
	}
	defer done()
	ms, err := st.List(env.ctx)
	if err != nil {
		return err
	}
	if ms == nil {
		ms = []scheduler.Mission{}
	}
	names := loadHandles()
	if c.JSON {
		return names.writeJSON(env, ms)
	}
	if len(ms) == 0 {
		fmt.Fprintln(env.stdout, "No missions. Add one with `buddi missions add --agent HANDLE --cron EXPR --prompt TEXT`.")
		return nil
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tAGENT\tSCHEDULE\tZONE\tMISFIRE\tSTATE")
	for _, m := range ms {
		state := "on"
		if !m.Enabled {
			state = "off"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.Name, names.of(m.Agent), m.Cron, m.Timezone, m.Misfire, state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	owner := timezone.Local()
	fmt.Fprintf(env.stdout, "\nA mission added without --tz is in %s (%s).\n", owner.Name, zoneSource(owner))
	return nil
}

type missionsAddCmd struct {
	Agent         string `required:"" help:"The agent's handle (@dev) or id, or role:NAME for whichever agent holds that role when it runs."`
	Cron          string `required:"" help:"Five fields: minute hour day month weekday (\"0 9 * * 1-5\": weekdays at 09:00)."`
	TZ            string `name:"tz" help:"An IANA time zone, like Europe/Berlin. Default: the owner's (TZ, else /etc/localtime, else /etc/timezone, else UTC)." default:""`
	Misfire       string `enum:"replay-all,coalesce,latest-only,skip-after-deadline" default:"coalesce" help:"What a machine that slept owes: ${enum}."`
	Prompt        string `required:"" help:"What the agent is asked each time."`
	Name          string `help:"A name for it. Default: the first words of the prompt."`
	AlwaysDeliver bool   `help:"Deliver every run's answer, even one that says nothing new."`
	JSON          bool   `name:"json" help:"Print the mission added as JSON (the fields of missions list --json, and cadence)."`
}

func (c missionsAddCmd) Run(env *runEnv) error {
	id := c.Agent
	if role, ok := strings.CutPrefix(c.Agent, "role:"); ok {
		cat, err := loadCatalog()
		if err != nil {
			return err
		}
		if _, err := cat.ForRole(role); err != nil {
			return &exitError{code: 1, err: fmt.Errorf("%v: give an agent `roles: [%s]` in its file", err, role)}
		}
	} else {
		var err error
		if id, err = agentID(c.Agent); err != nil {
			return err
		}
	}
	tz := c.TZ
	if tz == "" {
		owner := timezone.Local()
		tz = owner.Name
		if !owner.Found() {
			fmt.Fprintln(env.stderr, owner.Note)
		}
	}
	sched, err := scheduler.Parse(c.Cron, tz)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	name := c.Name
	if name == "" {
		name = firstWords(c.Prompt, 6)
	}
	st, done, err := missionStore(env)
	if err != nil {
		return err
	}
	defer done()
	m, err := st.Add(env.ctx, scheduler.Mission{Name: name, Agent: id, Prompt: c.Prompt, Cron: c.Cron, Timezone: tz, Misfire: c.Misfire, AlwaysDeliver: c.AlwaysDeliver})
	if err != nil {
		return err
	}
	cadence := sched.Cadence(time.Now())
	if c.JSON {
		out, err := loadHandles().annotate(m)
		if err != nil {
			return err
		}
		if o, ok := out.(map[string]any); ok {
			o["cadence"] = cadence
		}
		return writeJSON(env, out)
	}
	fmt.Fprintf(env.stdout, "mission %d added: %s\n", m.ID, cadence)
	return nil
}

func firstWords(s string, n int) string {
	words := 0
	for i, r := range s {
		if r == ' ' {
			words++
			if words == n {
				return s[:i] + "…"
			}
		}
	}
	return s
}

type missionsRunNowCmd struct {
	ID   int64 `arg:"" help:"The mission's id."`
	JSON bool  `name:"json" help:"Print JSON: {\"ok\",\"id\",\"occurrence\"}."`
}

func (c missionsRunNowCmd) Run(env *runEnv) error {
	st, done, err := missionStore(env)
	if err != nil {
		return err
	}
	defer done()
	occ, err := st.RunNow(env.ctx, c.ID, time.Now())
	if err != nil {
		return missionExit(err)
	}
	return report(env, c.JSON, acted(map[string]any{"id": c.ID, "occurrence": occ}),
		"mission %d runs now (occurrence %d); buddi serve starts it", c.ID, occ)
}

type missionsEnableCmd struct {
	ID   int64 `arg:"" help:"The mission's id."`
	JSON bool  `name:"json" help:"Print JSON: {\"ok\",\"id\",\"enabled\"}."`
}

func (c missionsEnableCmd) Run(env *runEnv) error { return setMission(env, c.ID, true, c.JSON) }

type missionsDisableCmd struct {
	ID   int64 `arg:"" help:"The mission's id."`
	JSON bool  `name:"json" help:"Print JSON: {\"ok\",\"id\",\"enabled\"}."`
}

func (c missionsDisableCmd) Run(env *runEnv) error { return setMission(env, c.ID, false, c.JSON) }

func setMission(env *runEnv, id int64, on, asJSON bool) error {
	st, done, err := missionStore(env)
	if err != nil {
		return err
	}
	defer done()
	if err := st.SetEnabled(env.ctx, id, on, time.Now()); err != nil {
		return missionExit(err)
	}
	state := "off"
	if on {
		state = "on"
	}
	return report(env, asJSON, acted(map[string]any{"id": id, "enabled": on}), "mission %d is %s", id, state)
}

type missionsOccurrencesCmd struct {
	ID   int64 `arg:"" help:"The mission's id."`
	JSON bool  `help:"Print JSON."`
}

func (c missionsOccurrencesCmd) Run(env *runEnv) error {
	st, done, err := missionStore(env)
	if err != nil {
		return err
	}
	defer done()
	m, err := st.Get(env.ctx, c.ID)
	if err != nil {
		return missionExit(err)
	}
	occ, err := st.Occurrences(env.ctx, c.ID, 200)
	if err != nil {
		return err
	}
	if occ == nil {
		occ = []scheduler.Occurrence{}
	}
	if c.JSON {
		return writeJSON(env, occ)
	}
	loc := timezone.Zone{Name: m.Timezone}.Location()
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tINSTANT\tSTATE\tWHY")
	for _, o := range occ {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", o.ID, o.Instant.In(loc).Format("Mon Jan 2 15:04 MST"), o.State, o.Reason)
	}
	return tw.Flush()
}

type missionsAddDefaultsCmd struct {
	JSON bool `name:"json" help:"Print the missions added as a JSON list (empty when they were there already)."`
}

func (c missionsAddDefaultsCmd) Run(env *runEnv) error {
	cat, err := loadCatalog()
	if err != nil {
		return err
	}
	holder, err := cat.ForRole("recap")
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("%v: give an agent `roles: [recap]` in its file", err)}
	}
	owner := timezone.Local()
	if !owner.Found() {
		fmt.Fprintln(env.stderr, owner.Note)
	}
	tz := owner.Name
	st, done, err := missionStore(env)
	if err != nil {
		return err
	}
	defer done()
	added, err := st.AddDefaults(env.ctx, holder.ID, tz)
	if err != nil {
		return err
	}
	names := loadHandles()
	if c.JSON {
		if added == nil {
			added = []scheduler.Mission{}
		}
		return names.writeJSON(env, added)
	}
	if len(added) == 0 {
		fmt.Fprintln(env.stdout, "The default missions are there already.")
		return nil
	}
	for _, m := range added {
		fmt.Fprintf(env.stdout, "mission %d added: %s for %s, %s (%s)\n", m.ID, m.Name, names.of(m.Agent), m.Cron, m.Timezone)
	}
	return nil
}

// zoneSource says where the owner's zone was found, for the owner.
func zoneSource(z timezone.Zone) string {
	switch z.Source {
	case timezone.FromTZ:
		return "from TZ"
	case timezone.FromLocaltime, timezone.FromTimezone:
		return "from " + z.Source
	}
	return "no zone was found on this machine: set TZ, like TZ=Europe/Berlin"
}
