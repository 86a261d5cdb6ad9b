package main

import (
	"fmt"

	"buddi/app"
	"buddi/doctor"
)

type doctorCmd struct {
	JSON bool `help:"Print the report as JSON."`
}

func (c doctorCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	rep := doctor.Run(env.ctx, cfg, app.Schemas(app.Manifests(nil, cfg.Home, nil))...)
	if c.JSON {
		if err := writeJSON(env, rep); err != nil {
			return err
		}
	} else {
		for _, ch := range rep.Checks {
			mark := "ok  "
			if !ch.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(env.stdout, "%s  %-17s %s\n", mark, ch.Name, ch.Detail)
			if ch.Fix != "" {
				fmt.Fprintf(env.stdout, "      %-17s → %s\n", "", ch.Fix)
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
	if rep.ExitCode != doctor.ExitOK {
		return &exitError{code: rep.ExitCode}
	}
	return nil
}
