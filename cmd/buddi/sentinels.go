package main

import (
	"fmt"
	"text/tabwriter"

	"buddi/app"
	"buddi/plugins"
	"buddi/sentinels"
)

type sentinelsCmd struct {
	List     sentinelsListCmd     `cmd:"" default:"withargs" help:"List the sentinels: switched on or off, their last tick, open findings."`
	Findings sentinelsFindingsCmd `cmd:"" help:"List the findings that are not resolved."`
	On       sentinelsSwitchCmd   `cmd:"" help:"Switch a sentinel on."`
	Off      sentinelsOffCmd      `cmd:"" help:"Switch a sentinel off."`
	Snooze   sentinelsSnoozeCmd   `cmd:"" help:"Silence a finding: Not now (a week), or --not-needed (until it resolves)."`
	Mute     sentinelsMuteCmd     `cmd:"" help:"Stop telling me this: mute a kind of finding, or one subject of it."`
}

func allSentinelsCLI() []plugins.Sentinel {
	var out []plugins.Sentinel
	for _, m := range app.Manifests(nil, "", nil) {
		out = append(out, m.Sentinels...)
	}
	return out
}

func withEngine(env *runEnv, fn func(e *sentinels.Engine) error) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	return fn(&sentinels.Engine{Pool: src.Pool})
}

type sentinelsListCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c sentinelsListCmd) Run(env *runEnv) error {
	return withEngine(env, func(e *sentinels.Engine) error {
		sts, err := e.Statuses(env.ctx, allSentinelsCLI())
		if err != nil {
			return err
		}
		if c.JSON {
			return writeJSON(env, sts)
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SENTINEL\tSTATE\tLAST TICK\tOPEN\tWATCHES")
		for _, s := range sts {
			state, last := "on", "never"
			if !s.Enabled {
				state = "off"
			}
			if s.LastRun != nil {
				last = s.LastRun.Local().Format("Jan 2 15:04")
				if s.LastError != "" {
					last += " (failed: " + s.LastError + ")"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", s.ID, state, last, s.Findings, s.Description)
		}
		return tw.Flush()
	})
}

type sentinelsFindingsCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c sentinelsFindingsCmd) Run(env *runEnv) error {
	return withEngine(env, func(e *sentinels.Engine) error {
		fs, err := e.OpenFindings(env.ctx)
		if err != nil {
			return err
		}
		if fs == nil {
			fs = []sentinels.Finding{}
		}
		if c.JSON {
			return writeJSON(env, fs)
		}
		if len(fs) == 0 {
			fmt.Fprintln(env.stdout, "Nothing open.")
			return nil
		}
		for _, f := range fs {
			note := ""
			if f.Snoozed != nil || f.NotNeeded {
				note = " (snoozed)"
			}
			fmt.Fprintf(env.stdout, "[%s] %s%s\n  %s %s\n", f.Severity, f.OwnerLine, note, f.Sentinel, f.Key)
		}
		return nil
	})
}

type sentinelsSwitchCmd struct {
	ID   string `arg:"" help:"The sentinel."`
	JSON bool   `name:"json" help:"Print JSON: {\"ok\",\"id\",\"enabled\"}."`
}

func (c sentinelsSwitchCmd) Run(env *runEnv) error { return switchSentinel(env, c.ID, true, c.JSON) }

type sentinelsOffCmd struct {
	ID   string `arg:"" help:"The sentinel."`
	JSON bool   `name:"json" help:"Print JSON: {\"ok\",\"id\",\"enabled\"}."`
}

func (c sentinelsOffCmd) Run(env *runEnv) error { return switchSentinel(env, c.ID, false, c.JSON) }

func switchSentinel(env *runEnv, id string, on, asJSON bool) error {
	known := false
	for _, s := range allSentinelsCLI() {
		known = known || s.ID == id
	}
	if !known {
		return &exitError{code: 1, err: fmt.Errorf("no sentinel %q: `buddi sentinels` lists them", id)}
	}
	return withEngine(env, func(e *sentinels.Engine) error {
		if err := e.Switch(env.ctx, id, on); err != nil {
			return err
		}
		return report(env, asJSON, acted(map[string]any{"id": id, "enabled": on}), "%s is %s", id, map[bool]string{true: "on", false: "off"}[on])
	})
}

type sentinelsSnoozeCmd struct {
	Sentinel  string `arg:"" help:"The sentinel."`
	Key       string `arg:"" help:"The finding's key (buddi sentinels findings)."`
	NotNeeded bool   `help:"Until it resolves, rather than for a week."`
	JSON      bool   `name:"json" help:"Print JSON: {\"ok\",\"sentinel\",\"key\",\"not_needed\"}."`
}

func (c sentinelsSnoozeCmd) Run(env *runEnv) error {
	return withEngine(env, func(e *sentinels.Engine) error {
		if err := e.Snooze(env.ctx, c.Sentinel, c.Key, c.NotNeeded); err != nil {
			return &exitError{code: 1, err: fmt.Errorf("%v: `buddi sentinels findings` lists them", err)}
		}
		return report(env, c.JSON, acted(map[string]any{"sentinel": c.Sentinel, "key": c.Key, "not_needed": c.NotNeeded}), "snoozed")
	})
}

type sentinelsMuteCmd struct {
	Kind    string `arg:"" help:"The kind of finding."`
	Subject string `arg:"" optional:"" help:"Only this subject of it."`
	JSON    bool   `name:"json" help:"Print JSON: {\"ok\",\"kind\",\"subject\"}."`
}

func (c sentinelsMuteCmd) Run(env *runEnv) error {
	return withEngine(env, func(e *sentinels.Engine) error {
		if err := e.Mute(env.ctx, c.Kind, c.Subject); err != nil {
			return err
		}
		return report(env, c.JSON, acted(map[string]any{"kind": c.Kind, "subject": c.Subject}), "muted: still recorded, never told")
	})
}
