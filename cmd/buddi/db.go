package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"buddi/app"
	"buddi/datadir"
	"buddi/dbsource"
	"buddi/doctor"
	"buddi/migrations"
	"buddi/pgcluster"
)

type dbCmd struct {
	Migrate dbMigrateCmd `cmd:"" help:"Apply pending migrations (core and the queue's)."`
	Status  dbStatusCmd  `cmd:"" help:"Show each schema's applied and target version."`
	Upgrade dbUpgradeCmd `cmd:"" help:"Move buddi's own database to the newest PostgreSQL installed (pg_upgrade; the old one is kept)."`
}

type dbMigrateCmd struct {
	JSON bool `help:"Print the result as JSON."`
}

func (c dbMigrateCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	if err := datadir.PrepareHome(cfg.Home); err != nil {
		return err
	}
	src, err := dbsource.Open(env.ctx, cfg, dbsource.Options{CreateIfMissing: true, Log: env.log})
	if err != nil {
		return err
	}
	defer closeSource(src)
	applied, err := src.Migrate(env.ctx, env.log, app.Schemas(app.Manifests(nil, cfg.Home, nil))...)
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(env, applied)
	}
	n := 0
	for _, a := range applied {
		for _, v := range a.Versions {
			fmt.Fprintf(env.stdout, "applied %s %d\n", a.Schema, v)
			n++
		}
	}
	if n == 0 {
		fmt.Fprintln(env.stdout, "nothing to apply: every schema is current")
	}
	return nil
}

type dbStatusCmd struct {
	JSON bool `help:"Print the status as JSON."`
}

func (c dbStatusCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	src, err := dbsource.Open(env.ctx, cfg, dbsource.Options{Log: env.log})
	if err != nil {
		return err
	}
	defer closeSource(src)
	sts, err := migrations.Check(env.ctx, src.Pool, app.Schemas(app.Manifests(nil, cfg.Home, nil))...)
	if err != nil {
		return err
	}
	pending := false
	for _, st := range sts {
		pending = pending || st.Pending()
	}
	if c.JSON {
		if err := writeJSON(env, map[string]any{"database": src.Kind, "target": src.Target, "schemas": sts, "current": !pending}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(env.stdout, "database: %s, %s\n", src.Kind, src.Target)
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SCHEMA\tAPPLIED\tTARGET\tSTATE")
		for _, st := range sts {
			state := "current"
			if st.Pending() {
				state = "pending"
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", st.Schema, st.Current, st.Target, state)
		}
		tw.Flush()
	}
	if pending {
		return &exitError{code: 1, err: fmt.Errorf("migrations are pending: run `buddi db migrate`")}
	}
	return nil
}

func closeSource(src *dbsource.Source) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = src.Close(ctx)
}

type dbUpgradeCmd struct {
	JSON bool `help:"Print the result as JSON."`
}

func (c dbUpgradeCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	if !cfg.Embedded() {
		return &exitError{code: doctor.ExitUsage, err: errors.New("DATABASE_URL is set, so buddi does not run its own database: upgrade that server with its own tools")}
	}
	if _, err := os.Stat(cfg.Home); err != nil {
		return &exitError{code: doctor.ExitDoFirst, err: fmt.Errorf("there is no buddi in %s yet: nothing to upgrade", cfg.Home)}
	}
	lock, err := datadir.TryLock(cfg.Home)
	if err != nil {
		return err
	}
	defer lock.Release()
	progress := func(line string) {
		if !c.JSON {
			fmt.Fprintln(env.stdout, line)
		}
	}
	res, err := pgcluster.Upgrade(env.ctx, pgcluster.UpgradeOptions{Dir: cfg.ClusterDir(), Progress: progress, Log: env.log})
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(env, res)
	}
	if res.Kept == "" {
		fmt.Fprintf(env.stdout, "the database already runs on PostgreSQL %s, the newest installed: nothing to do\n", res.To)
		return nil
	}
	fmt.Fprintf(env.stdout, "upgraded from PostgreSQL %s to %s; the old cluster is in %s: remove it once buddi runs well\n", res.From, res.To, res.Kept)
	return nil
}
