// Package migrations applies buddi's database schemas: core's own SQL files (embedded here)
// through goose, one version table per schema, and River's tables through rivermigrate, in
// the schema "river". Applying is idempotent and serialised across processes by an advisory
// lock, so two starts at once do not race.
package migrations

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

//go:embed core/*.sql
var coreFiles embed.FS

// RiverSchema is the schema that holds River's tables.
const RiverSchema = "river"

// versionTable is goose's bookkeeping table, created inside each migrated schema.
const versionTable = "schema_version"

// lockKey is the advisory lock that serialises migrations ("buddi mig" as bytes).
const lockKey int64 = 0x6275646469_6d6967

// Set is one schema's migrations: SQL files in goose's format at the root of FS.
type Set struct {
	Schema string // the Postgres schema migrated, which also holds goose's version table
	FS     fs.FS  // the SQL files, at its root
}

// Core is core's own schema.
func Core() Set {
	sub, err := fs.Sub(coreFiles, "core")
	if err != nil {
		panic(err) // the embed pattern above guarantees the directory
	}
	return Set{Schema: "core", FS: sub}
}

// Status says where one schema stands.
type Status struct {
	Schema  string `json:"schema"`  // e.g. "core" or "river"
	Current int64  `json:"current"` // the highest version applied; 0 when none is
	Target  int64  `json:"target"`  // the highest version this binary carries
}

// Pending reports whether migrations wait to be applied.
func (s Status) Pending() bool { return s.Current < s.Target }

// Applied is what one Up did.
type Applied struct {
	Schema   string  `json:"schema"`   // e.g. "core" or "river"
	Versions []int64 `json:"versions"` // applied by this Up, in order; empty if none were due
}

// Up applies core, the given plugin sets, and River's migrations, each only as far as needed.
func Up(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger, extra ...Set) ([]Applied, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: acquire connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lockKey); err != nil {
		return nil, fmt.Errorf("migrate: take lock: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lockKey) }()

	var out []Applied
	for _, set := range append([]Set{Core()}, extra...) {
		versions, err := upSet(ctx, pool, set, log)
		if err != nil {
			return out, err
		}
		out = append(out, Applied{Schema: set.Schema, Versions: versions})
	}
	versions, err := upRiver(ctx, pool, log)
	if err != nil {
		return out, err
	}
	return append(out, Applied{Schema: RiverSchema, Versions: versions}), nil
}

func upSet(ctx context.Context, pool *pgxpool.Pool, set Set, log *slog.Logger) ([]int64, error) {
	if _, err := pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{set.Schema}.Sanitize()); err != nil {
		return nil, fmt.Errorf("migrate %s: create schema: %w", set.Schema, err)
	}
	p, closeDB, err := provider(pool, set, log)
	if err != nil {
		return nil, err
	}
	defer closeDB()
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate %s: %w", set.Schema, err)
	}
	var versions []int64
	for _, r := range results {
		versions = append(versions, r.Source.Version)
	}
	return versions, nil
}

func provider(pool *pgxpool.Pool, set Set, log *slog.Logger) (*goose.Provider, func(), error) {
	db := stdlib.OpenDBFromPool(pool)
	p, err := goose.NewProvider(goose.DialectPostgres, db, set.FS,
		goose.WithTableName(set.Schema+"."+versionTable),
		goose.WithDisableGlobalRegistry(true),
		goose.WithSlog(log.With("service", "migrations", "schema", set.Schema)),
	)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("migrate %s: read migrations: %w", set.Schema, err)
	}
	return p, func() { db.Close() }, nil
}

func riverMigrator(pool *pgxpool.Pool, log *slog.Logger) (*rivermigrate.Migrator[pgx.Tx], error) {
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{
		Schema: RiverSchema,
		Logger: log.With("service", "migrations", "schema", RiverSchema),
	})
	if err != nil {
		return nil, fmt.Errorf("migrate river: %w", err)
	}
	return m, nil
}

func upRiver(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) ([]int64, error) {
	if _, err := pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+RiverSchema); err != nil {
		return nil, fmt.Errorf("migrate river: create schema: %w", err)
	}
	m, err := riverMigrator(pool, log)
	if err != nil {
		return nil, err
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return nil, fmt.Errorf("migrate river: %w", err)
	}
	var versions []int64
	for _, v := range res.Versions {
		versions = append(versions, int64(v.Version))
	}
	return versions, nil
}

// Check reports each schema's applied and target versions without changing anything.
func Check(ctx context.Context, pool *pgxpool.Pool, extra ...Set) ([]Status, error) {
	var out []Status
	for _, set := range append([]Set{Core()}, extra...) {
		st, err := checkSet(ctx, pool, set)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	st, err := checkRiver(ctx, pool)
	if err != nil {
		return nil, err
	}
	return append(out, st), nil
}

func tableExists(ctx context.Context, pool *pgxpool.Pool, name string) (bool, error) {
	var exists bool
	err := pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", name).Scan(&exists)
	return exists, err
}

func checkSet(ctx context.Context, pool *pgxpool.Pool, set Set) (Status, error) {
	st := Status{Schema: set.Schema}
	p, closeDB, err := provider(pool, set, slog.New(slog.DiscardHandler))
	if err != nil {
		return st, err
	}
	defer closeDB()
	for _, src := range p.ListSources() {
		st.Target = max(st.Target, src.Version)
	}
	exists, err := tableExists(ctx, pool, set.Schema+"."+versionTable)
	if err != nil {
		return st, fmt.Errorf("status %s: %w", set.Schema, err)
	}
	if !exists {
		return st, nil
	}
	st.Current, err = p.GetDBVersion(ctx)
	if err != nil {
		return st, fmt.Errorf("status %s: %w", set.Schema, err)
	}
	return st, nil
}

func checkRiver(ctx context.Context, pool *pgxpool.Pool) (Status, error) {
	st := Status{Schema: RiverSchema}
	m, err := riverMigrator(pool, slog.New(slog.DiscardHandler))
	if err != nil {
		return st, err
	}
	for _, v := range m.AllVersions() {
		st.Target = max(st.Target, int64(v.Version))
	}
	exists, err := tableExists(ctx, pool, RiverSchema+".river_migration")
	if err != nil {
		return st, fmt.Errorf("status river: %w", err)
	}
	if !exists {
		return st, nil
	}
	applied, err := m.ExistingVersions(ctx)
	if err != nil {
		return st, fmt.Errorf("status river: %w", err)
	}
	for _, v := range applied {
		st.Current = max(st.Current, int64(v.Version))
	}
	return st, nil
}

// appendOnly are the tables whose rows, once written, no one may change or remove (their
// triggers refuse it too): the application role may only read and add to them.
var appendOnly = []string{"core.events", "core.actions"}

// keptRows are tables whose rows change but are never removed: the effect ledger (a deleted
// attempt would let an approved action dispatch again), the approvals and the standing
// permissions (their history is the record of the owner's decisions).
var keptRows = []string{"core.effect_attempts", "core.approvals", "core.tool_permissions"}

// Grant gives role, the role buddi's process and command line connect as, exactly what they
// need on the schemas the pool's role (the owner) owns in this database, which are the ones
// Up migrates (core's, the plugins', River's), and nothing more: USAGE on each schema;
// SELECT, INSERT, UPDATE and DELETE on its tables (SELECT and INSERT only on the append-only
// ones, no DELETE on the kept ones, SELECT only on the migrations' own bookkeeping); USAGE and SELECT on its sequences;
// CONNECT on the database, which PUBLIC loses with TEMPORARY. No TRUNCATE, REFERENCES or
// TRIGGER, no CREATE, and no ownership: role cannot alter, truncate or drop a table, nor
// disable, drop or replace a trigger. Default privileges give the same on the tables,
// sequences and schemas the owner makes later. Run it as the owner after Up (and on a
// database an earlier buddi made, before its first use); it is idempotent and serialised
// with migrations by the same advisory lock.
func Grant(ctx context.Context, pool *pgxpool.Pool, role string) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("grant: acquire connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lockKey); err != nil {
		return fmt.Errorf("grant: take lock: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lockKey) }()

	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("grant: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	stmts, err := grants(ctx, tx, pgx.Identifier{role}.Sanitize())
	if err != nil {
		return fmt.Errorf("grant: %w", err)
	}
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return fmt.Errorf("grant the application role its privileges: %s: %w", s, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("grant: %w", err)
	}
	return nil
}

// grants lists Grant's statements for the quoted role r.
func grants(ctx context.Context, tx pgx.Tx, r string) ([]string, error) {
	var database string
	if err := tx.QueryRow(ctx, "SELECT current_database()").Scan(&database); err != nil {
		return nil, err
	}
	d := pgx.Identifier{database}.Sanitize()
	rows, err := tx.Query(ctx, `SELECT nspname FROM pg_namespace
		WHERE nspowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)
		  AND nspname NOT LIKE 'pg\_%' AND nspname NOT IN ('information_schema', 'public')
		ORDER BY nspname`)
	if err != nil {
		return nil, err
	}
	schemas, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	stmts := []string{
		"REVOKE ALL ON DATABASE " + d + " FROM PUBLIC",
		"GRANT CONNECT ON DATABASE " + d + " TO " + r,
	}
	for _, s := range schemas {
		q := pgx.Identifier{s}.Sanitize()
		stmts = append(stmts,
			"GRANT USAGE ON SCHEMA "+q+" TO "+r,
			"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "+q+" TO "+r,
			"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA "+q+" TO "+r,
		)
	}
	stmts = append(stmts,
		"ALTER DEFAULT PRIVILEGES GRANT USAGE ON SCHEMAS TO "+r,
		"ALTER DEFAULT PRIVILEGES GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO "+r,
		"ALTER DEFAULT PRIVILEGES GRANT USAGE, SELECT ON SEQUENCES TO "+r,
	)
	// What the tables that exist withhold: changes to the append-only ones, writes to the
	// migrations' bookkeeping.
	rows, err = tx.Query(ctx, `SELECT format('%I.%I', n.nspname, c.relname), n.nspname || '.' || c.relname = ANY($1)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = ANY($2) AND c.relkind IN ('r', 'p')
		  AND (n.nspname || '.' || c.relname = ANY($1) OR n.nspname || '.' || c.relname = ANY($5)
		       OR c.relname = $3 OR (n.nspname = $4 AND c.relname = 'river_migration'))
		ORDER BY 1`, appendOnly, schemas, versionTable, RiverSchema, keptRows)
	if err != nil {
		return nil, err
	}
	type table struct {
		name       string
		appendOnly bool
	}
	tables, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (table, error) {
		var t table
		err := row.Scan(&t.name, &t.appendOnly)
		return t, err
	})
	if err != nil {
		return nil, err
	}
	for _, t := range tables {
		switch {
		case t.appendOnly:
			stmts = append(stmts, "REVOKE UPDATE, DELETE ON TABLE "+t.name+" FROM "+r)
		case slices.Contains(keptRows, unquote(t.name)):
			stmts = append(stmts, "REVOKE DELETE ON TABLE "+t.name+" FROM "+r)
		default:
			stmts = append(stmts, "REVOKE INSERT, UPDATE, DELETE ON TABLE "+t.name+" FROM "+r)
		}
	}
	return stmts, nil
}

// unquote turns format('%I.%I')'s "schema"."table" (quotes only where needed) into
// schema.table.
func unquote(name string) string { return strings.ReplaceAll(name, `"`, "") }
