package main

import (
	"fmt"
	"os"

	"buddi/app"
	"buddi/core/vault"
	"buddi/doctor"
	"buddi/internal/timezone"
)

type doctorCmd struct {
	JSON bool `help:"Print every check as JSON: its name, status (ok, warn or fail), sentence and fix."`
	Fix  bool `help:"Do the safe repairs (create a missing data directory, take away what others may do in it) and say what was done; nothing is restarted, the vault and the accounts are never touched."`
}

// Help is the command's long help: what it checks and its exit codes.
func (doctorCmd) Help() string {
	return `Checks what the owner needs, asking the running buddi where it matters: its vault is open,
each agent has a working account, the time zone is known, Telegram (paired, its last poll),
the tailnet, approvals that wait and failed jobs; and the plumbing (data directory, listener,
supervision tree, database, migrations, queue). Each problem comes with one sentence on what
to do.

Exit codes:
  0  all good; warnings (an agent without an account, an approval that waits, no time zone
     found) are listed but do not change it
  1  something the owner must fix
  3  something must be done first (buddi was never started here, no PostgreSQL)`
}

func (c doctorCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	o := doctor.Options{Schemas: app.Schemas(app.Manifests(nil, cfg.Home, nil)), Zone: timezone.Owner(cfg.Home), Catalog: loadCatalog, Fix: c.Fix}
	if _, err := os.Stat(cfg.Home); err == nil { // opening the vault creates nothing; a missing home is said once, by its own check
		o.Vault, _, o.VaultErr = vault.OpenOwner(vaultPath(cfg.Home), os.Getenv)
	}
	rep := doctor.Run(env.ctx, cfg, o)
	if c.JSON {
		if err := writeJSON(env, rep); err != nil {
			return err
		}
	} else {
		printDoctor(env, rep)
	}
	if rep.ExitCode != doctor.ExitOK {
		return &exitError{code: rep.ExitCode}
	}
	return nil
}

func printDoctor(env *runEnv, rep *doctor.Report) {
	marks := map[doctor.Status]string{doctor.OK: "ok  ", doctor.Warn: "warn", doctor.Fail: "FAIL"}
	var fixed []string
	for _, ch := range rep.Checks {
		fmt.Fprintf(env.stdout, "%s  %-17s %s\n", marks[ch.Status], ch.Name, ch.Sentence)
		if ch.Fix != "" {
			fmt.Fprintf(env.stdout, "      %-17s → %s\n", "", ch.Fix)
		}
		if ch.Fixed != "" {
			fixed = append(fixed, ch.Fixed)
		}
	}
	if len(fixed) > 0 {
		fmt.Fprintln(env.stdout, "\ndoctor --fix did:")
		for _, f := range fixed {
			fmt.Fprintf(env.stdout, "  %s\n", f)
		}
	}
	if rep.Serving != nil {
		fmt.Fprintln(env.stdout, "\nsupervision tree:")
		for _, a := range rep.Serving.Actors {
			strategy := ""
			if a.Strategy != "" {
				strategy = "  [" + a.Strategy + "]"
			}
			fmt.Fprintf(env.stdout, "  %-28s %-9s restarts %d%s\n", a.Path, a.State, a.Restarts, strategy)
		}
	}
	if len(rep.SupervisorEvents) > 0 {
		fmt.Fprintln(env.stdout, "\nlatest supervisor decisions:")
		for _, e := range rep.SupervisorEvents {
			fmt.Fprintf(env.stdout, "  %s  %s  %s\n", e.CreatedAt.Local().Format("2006-01-02 15:04:05"), e.Kind, e.Payload)
		}
	}
}
