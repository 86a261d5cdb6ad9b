package dbsource_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"buddi/config"
	"buddi/dbsource"
	"buddi/internal/pgtest"
	"buddi/migrations"
	"buddi/pgcluster"
	"buddi/queue"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// plugin is a plugin's schema, to show the grants reach every migrated schema.
func plugin() migrations.Set {
	return migrations.Set{Schema: "plug", FS: fstest.MapFS{
		"00001_things.sql": {Data: []byte("-- +goose Up\nCREATE TABLE plug.things (id bigserial PRIMARY KEY, name text NOT NULL);\n-- +goose Down\nDROP TABLE plug.things;\n")},
	}}
}

// embedded opens and migrates an embedded cluster in a new data directory, as buddi serve
// does, and closes it when the test ends.
func embedded(t *testing.T) (*dbsource.Source, config.Config) {
	t.Helper()
	cfg, err := config.FromLookup(func(k string) (string, bool) {
		if k == "BUDDI_HOME" {
			return t.TempDir(), true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	src, err := dbsource.Open(ctx, cfg, dbsource.Options{CreateIfMissing: true, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = src.Close(ctx)
	})
	if _, err := src.Migrate(ctx, nil, plugin()); err != nil {
		t.Fatal(err)
	}
	return src, cfg
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func ownerConn(t *testing.T, src *dbsource.Source) *pgx.Conn {
	t.Helper()
	dsn, err := src.OwnerDSN()
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, dsn)
}

func code(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// attempt runs sql in a transaction that is rolled back whatever happens.
func attempt(ctx context.Context, conn *pgx.Conn, sql string) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, sql)
	return err
}

// The application role works the tables and cannot touch what keeps the record honest: the
// immutability triggers, the tables' shape, the replication role.
func TestAppRole(t *testing.T) {
	t.Parallel()
	src, _ := embedded(t)
	ctx := context.Background()
	if strings.Contains(src.Target, "password") || !strings.Contains(src.Target, pgcluster.App) {
		t.Errorf("target %q: want the application role named and no password", src.Target)
	}
	var user string
	if err := src.Pool.QueryRow(ctx, "SELECT current_user").Scan(&user); err != nil || user != pgcluster.App {
		t.Fatalf("the application pool is %q (%v), want %s", user, err, pgcluster.App)
	}
	app := connect(t, src.DSN)

	// What the code does.
	var eventID, actionID string
	for _, sql := range []string{
		`INSERT INTO core.events (kind, payload) VALUES ('test.added', '{}') RETURNING id::text`,
		`INSERT INTO core.actions (tool, tool_version, agent, args, envelope, policy_version, hash, expires_at)
			VALUES ('t.x', '1', 'helper', '{}', '{}', 1, 'h', now() + interval '1 hour') RETURNING id::text`,
	} {
		var id string
		if err := app.QueryRow(ctx, sql).Scan(&id); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if eventID == "" {
			eventID = id
		} else {
			actionID = id
		}
	}
	for _, sql := range []string{
		`INSERT INTO core.approvals (action_id) VALUES ('` + actionID + `')`,
		`UPDATE core.approvals SET state = 'rejected' WHERE action_id = '` + actionID + `'`,
		`SELECT state FROM core.approvals WHERE action_id = '` + actionID + `' FOR UPDATE`,
		`INSERT INTO core.system_flags (key, value) VALUES ('test', '{}')`,
		`DELETE FROM core.system_flags WHERE key = 'test'`,
		`INSERT INTO plug.things (name) VALUES ('one')`,
		`UPDATE plug.things SET name = 'two'`,
		`SELECT count(*) FROM core.schema_version`,
		`SELECT count(*) FROM river.river_migration`,
		`SELECT count(*) FROM river.river_job`,
	} {
		if _, err := app.Exec(ctx, sql); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}

	// What it must not.
	for _, sql := range []string{
		`UPDATE core.events SET kind = 'test.changed' WHERE id = ` + eventID,
		`DELETE FROM core.events WHERE id = ` + eventID,
		`UPDATE core.actions SET hash = 'forged' WHERE id = '` + actionID + `'`,
		`DELETE FROM core.actions WHERE id = '` + actionID + `'`,
		`TRUNCATE core.events`,
		`TRUNCATE core.actions CASCADE`,
		`TRUNCATE core.approvals`,
		`TRUNCATE river.river_job`,
		`ALTER TABLE core.events DISABLE TRIGGER events_append_only`,
		`ALTER TABLE core.events DISABLE TRIGGER ALL`,
		`ALTER TABLE core.actions DISABLE TRIGGER actions_immutable`,
		`DROP TRIGGER events_append_only ON core.events`,
		`DROP TRIGGER actions_immutable ON core.actions`,
		`CREATE OR REPLACE FUNCTION core.actions_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`,
		`ALTER FUNCTION core.events_refuse_change() RENAME TO gone`,
		`ALTER TABLE core.events ADD COLUMN x int`,
		`ALTER TABLE core.actions RENAME TO old_actions`,
		`ALTER TABLE core.approvals DROP CONSTRAINT approvals_state_check`,
		`DROP TABLE core.events`,
		`DROP SCHEMA core CASCADE`,
		`CREATE TABLE core.mine (x int)`,
		`CREATE SCHEMA mine`,
		`CREATE TEMP TABLE mine (x int)`,
		`CREATE TRIGGER mine BEFORE INSERT ON core.approvals FOR EACH ROW EXECUTE FUNCTION core.actions_refuse_change()`,
		`SET session_replication_role = replica`,
		`SET LOCAL session_replication_role = replica`,
		`SELECT set_config('session_replication_role', 'replica', false)`,
		`ALTER ROLE buddi_app SET session_replication_role = replica`,
		// A GRANT without the grant option only warns; what counts is that it changes nothing.
		`GRANT UPDATE ON core.events TO buddi_app; UPDATE core.events SET kind = 'test.changed' WHERE id = ` + eventID,
		`SET ROLE buddi`,
		`REINDEX INDEX river.river_job_kind`,
		`INSERT INTO core.schema_version (version_id, is_applied) VALUES (999, true)`,
		`DELETE FROM river.river_migration`,
		`COPY core.events FROM PROGRAM 'true'`,
		`SELECT pg_read_file('postgresql.conf')`,
	} {
		err := attempt(ctx, app, sql)
		if err == nil {
			t.Errorf("%s: allowed", sql)
			continue
		}
		// Refused for want of privilege (42501), ownership (42501 too), or superuser.
		if c := code(err); c != "42501" {
			t.Errorf("%s: %v (code %s), want a refusal for want of privilege", sql, err, c)
		}
	}

	// The triggers still refuse, even for the owner (a superuser here).
	owner := ownerConn(t, src)
	for _, sql := range []string{
		`UPDATE core.events SET kind = 'test.changed' WHERE id = ` + eventID,
		`DELETE FROM core.events WHERE id = ` + eventID,
		`TRUNCATE core.events`,
		`UPDATE core.actions SET hash = 'forged' WHERE id = '` + actionID + `'`,
		`DELETE FROM core.actions WHERE id = '` + actionID + `'`,
	} {
		if err := attempt(ctx, owner, sql); code(err) != "23001" {
			t.Errorf("as the owner, %s: %v, want the trigger's restrict_violation", sql, err)
		}
	}

	// The application role owns nothing.
	var owned int
	err := owner.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_class WHERE relowner = r.oid) + (SELECT count(*) FROM pg_namespace WHERE nspowner = r.oid)
		+ (SELECT count(*) FROM pg_proc WHERE proowner = r.oid) + (SELECT count(*) FROM pg_type WHERE typowner = r.oid)
		+ (SELECT count(*) FROM pg_database WHERE datdba = r.oid) FROM pg_roles r WHERE rolname = $1`, pgcluster.App).Scan(&owned)
	if err != nil || owned != 0 {
		t.Errorf("%s owns %d objects (%v)", pgcluster.App, owned, err)
	}
}

// Tables, sequences and schemas a later migration makes are the application role's to use
// at once, with no new grant.
func TestAppRoleCoversLaterTables(t *testing.T) {
	t.Parallel()
	src, _ := embedded(t)
	ctx := context.Background()
	owner := ownerConn(t, src)
	for _, sql := range []string{
		`CREATE TABLE core.later (id bigserial PRIMARY KEY, x int)`,
		`CREATE SCHEMA later`,
		`CREATE TABLE later.things (id bigserial PRIMARY KEY, x int)`,
	} {
		if _, err := owner.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	app := connect(t, src.DSN)
	for _, sql := range []string{
		`INSERT INTO core.later (x) VALUES (1)`,
		`UPDATE core.later SET x = 2`,
		`DELETE FROM core.later`,
		`INSERT INTO later.things (x) VALUES (1)`,
		`SELECT count(*) FROM later.things`,
	} {
		if _, err := app.Exec(ctx, sql); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
	if err := attempt(ctx, app, `TRUNCATE core.later`); code(err) != "42501" {
		t.Errorf("TRUNCATE of a later table: %v, want refused", err)
	}
}

// River works as the application role: leader election, fetching, completing a job.
func TestQueueRunsAsAppRole(t *testing.T) {
	t.Parallel()
	src, _ := embedded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	q, err := queue.New(src.Pool, queue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer q.Stop(context.Background(), 10*time.Second)
	if _, err := q.Client().Insert(ctx, queue.ProbeArgs{Note: "as the application role"}, nil); err != nil {
		t.Fatal(err)
	}
	pgtest.Eventually(t, "the probe job's event", func() bool {
		var n int
		err := src.Pool.QueryRow(ctx, `SELECT count(*) FROM core.events WHERE kind = 'queue.probed' AND payload->>'note' = 'as the application role'`).Scan(&n)
		return err == nil && n == 1
	})
}

// A command that finds the cluster running reads the application role's password from its
// file; without the file it says which is missing.
func TestAppDSN(t *testing.T) {
	t.Parallel()
	src, cfg := embedded(t)
	dsn, err := dbsource.AppDSN(cfg.Home)
	if err != nil || dsn != src.DSN {
		t.Fatalf("AppDSN = %v; want the source's", err)
	}
	other := t.TempDir()
	if _, err := dbsource.AppDSN(other); err == nil || !strings.Contains(err.Error(), other) {
		t.Errorf("AppDSN of a home with no cluster = %v, want an error naming the file", err)
	}
	if fi, err := os.Stat(cfg.ClusterDir() + "-app.password"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the application role's password file: %v", err)
	}
}

// With DATABASE_URL nothing changes: one role, the URL's, migrates and works; no grants.
func TestDatabaseURLUsesItsRole(t *testing.T) {
	t.Parallel()
	url := pgtest.EmptyDSN(t)
	cfg, err := config.FromLookup(func(k string) (string, bool) {
		switch k {
		case "BUDDI_HOME":
			return t.TempDir(), true
		case "DATABASE_URL":
			return url, true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	src, err := dbsource.Open(ctx, cfg, dbsource.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(ctx)
	owner, err := src.OwnerDSN()
	if err != nil || owner != url || src.DSN != url {
		t.Errorf("OwnerDSN = %v; DSN and OwnerDSN should both be the URL", err)
	}
	if _, err := src.Migrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := src.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_roles WHERE rolname = $1`, pgcluster.App).Scan(&n); err != nil {
		t.Fatal(err)
	}
	var clean bool
	if err := src.Pool.QueryRow(ctx, `SELECT $1 = 0 OR NOT has_table_privilege($2, 'core.events', 'SELECT')`, n, pgcluster.App).Scan(&clean); err != nil {
		t.Fatal(err)
	}
	if !clean {
		t.Errorf("migrating on DATABASE_URL granted %s privileges", pgcluster.App)
	}
}

// A database an earlier buddi migrated as its only role: the first command that starts the
// cluster grants the application role what it needs, before any migration runs.
func TestOpenGrantsWhatAnEarlierBuddiMigrated(t *testing.T) {
	t.Parallel()
	src, cfg := embedded(t)
	ctx := context.Background()
	owner := ownerConn(t, src)
	if _, err := owner.Exec(ctx, "DROP OWNED BY "+pgcluster.App); err != nil {
		t.Fatal(err)
	}
	owner.Close(ctx)
	if err := src.Close(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := dbsource.Open(ctx, cfg, dbsource.Options{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close(ctx)
	if again.Cluster == nil {
		t.Fatal("the second open did not start the cluster")
	}
	if _, err := migrations.Check(ctx, again.Pool, plugin()); err != nil {
		t.Errorf("the migrations' status as the application role: %v", err)
	}
	var n int
	if err := again.Pool.QueryRow(ctx, "SELECT count(*) FROM plug.things").Scan(&n); err != nil {
		t.Errorf("a plugin's table as the application role: %v", err)
	}
}
