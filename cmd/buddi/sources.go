package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"buddi/app"
	"buddi/sources"
)

type sourcesCmd struct {
	List sourcesListCmd `cmd:"" default:"withargs" help:"List the sources: their plugin, period, last poll and its state, when each is next due."`
}

type sourcesListCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c sourcesListCmd) Run(env *runEnv) error {
	entries, err := sources.Of(app.Manifests(nil, "", nil))
	if err != nil {
		return err
	}
	sts := []sources.Status{}
	if len(entries) > 0 { // nothing to read otherwise: the list answers without a database
		src, err := openActions(env)
		if err != nil {
			return err
		}
		defer closeSource(src)
		if sts, err = (&sources.Engine{Pool: src.Pool}).Statuses(env.ctx, entries); err != nil {
			return err
		}
	}
	if c.JSON {
		return writeJSON(env, sts)
	}
	return printSources(env.stdout, sts, time.Now())
}

// printSources writes sts as the owner's table: one line a source.
func printSources(w io.Writer, sts []sources.Status, now time.Time) error {
	if len(sts) == 0 {
		_, err := fmt.Fprintln(w, "No sources: no plugin of this buddi polls anything.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SOURCE\tPLUGIN\tPERIOD\tLAST POLL\tNEXT DUE\tSTATE")
	for _, s := range sts {
		last, state, next := "never", s.State, s.NextDue.Local().Format("Jan 2 15:04")
		if s.LastRun != nil {
			last = s.LastRun.Local().Format("Jan 2 15:04")
		}
		switch {
		case s.State == "failed" && s.Failures > 1:
			state = fmt.Sprintf("failed %d times in a row: %s", s.Failures, s.LastError)
		case s.State == "failed":
			state = "failed: " + s.LastError
		}
		if s.Paused {
			next = "paused (buddi resume)"
		} else if !s.NextDue.After(now) {
			next = "now"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Plugin, s.Period, last, next, state)
	}
	return tw.Flush()
}
