package main

import (
	"fmt"
	"text/tabwriter"

	"buddi/backup"
)

type recoveryCmd struct {
	JSON bool `help:"Print the checklist as JSON."`
}

// Run prints the recovery checklist: what a restored buddi would do once resumed.
func (c recoveryCmd) Run(env *runEnv) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	list, err := backup.ReadChecklist(env.ctx, src.Pool)
	if err != nil {
		return err
	}
	names := loadHandles()
	if c.JSON { // each item names its agent by id and, in agent_handle, by handle
		approved, err := names.annotate(list.Approved)
		if err != nil {
			return err
		}
		unknown, err := names.annotate(list.Unknown)
		if err != nil {
			return err
		}
		return writeJSON(env, map[string]any{"recovery": list.Recovery, "approved": approved, "unknown": unknown,
			"pending": list.Pending, "jobs": list.Jobs})
	}
	out := env.stdout
	if list.Recovery == nil {
		fmt.Fprintln(out, "buddi is not in recovery mode.")
		if len(list.Unknown) > 0 {
			fmt.Fprintf(out, "%d effects have an unknown outcome: see `buddi approvals list --state unknown`.\n", len(list.Unknown))
		}
		return nil
	}
	r := list.Recovery
	fmt.Fprintf(out, "buddi is in recovery mode: restored %s from %s (taken %s by buddi %s). Nothing unattended runs until `buddi resume`.\n\n",
		r.Since.Local().Format("2006-01-02 15:04"), r.Archive, r.TakenAt.Local().Format("2006-01-02 15:04"), r.BuddiVersion)
	fmt.Fprintln(out, "Checklist:")
	step := 1
	if !r.SealKept {
		fmt.Fprintf(out, "%d. The backup held no secrets and this home had no seal.key: sign in again (buddi dashboard), pair your phone again, grant standing permissions again, and set the vault's secrets again (buddi init or buddi vault set).\n", step)
		step++
	}
	if len(list.Approved) == 0 {
		fmt.Fprintf(out, "%d. No approved action is waiting to run.\n", step)
	} else {
		fmt.Fprintf(out, "%d. These actions were approved and never ran; they run once you resume (reject one first with `buddi approvals reject ID`):\n", step)
		items(out, names, list.Approved)
	}
	step++
	if len(list.Unknown) == 0 {
		fmt.Fprintf(out, "%d. No effect has an unknown outcome.\n", step)
	} else {
		fmt.Fprintf(out, "%d. Nobody knows whether these took effect (they were running when the backup was taken, or ended unclear): check each where it acts; buddi never retries them:\n", step)
		items(out, names, list.Unknown)
	}
	step++
	fmt.Fprintf(out, "%d. %d actions wait for a decision (buddi approvals list); the queue holds %d jobs to run, %d to retry, %d scheduled and %d that were running at the backup (buddi jobs).\n",
		step, list.Pending, list.Jobs["available"], list.Jobs["retryable"], list.Jobs["scheduled"], list.Jobs["running"])
	step++
	fmt.Fprintf(out, "%d. When all is in order: `buddi resume` leaves recovery mode and starts the work.\n", step)
	return nil
}

func items(out interface{ Write([]byte) (int, error) }, names handles, list []backup.Item) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "   ID\tTOOL\tAGENT\tSTATE\tSINCE\tWHAT")
	for _, it := range list {
		state := it.State
		if it.Effect != "" && it.Effect != it.State {
			state += " (effect " + it.Effect + ")"
		}
		fmt.Fprintf(tw, "   %s\t%s\t%s\t%s\t%s\t%s\n", it.ActionID, it.Tool, names.of(it.Agent), state, it.UpdatedAt.Local().Format("2006-01-02 15:04"), it.Summary)
	}
	tw.Flush()
}
