package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"buddi/pgcluster"
)

// Database is the database a dump is taken from or restored into.
type Database struct {
	// OwnerDSN connects as the role that owns buddi's schemas (pgcluster.Owner on the
	// embedded cluster, DATABASE_URL's role otherwise). It holds a password: never print it.
	OwnerDSN string
	// BinDir holds pg_dump and pg_restore. Empty: the directory pgcluster.FindBinaries
	// finds, else PATH.
	BinDir string
}

// tool finds a PostgreSQL client program (pg_dump, pg_restore).
func (d Database) tool(name string) (string, error) {
	if d.BinDir != "" {
		p := filepath.Join(d.BinDir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	} else if dir, err := pgcluster.FindBinaries(""); err == nil {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	where := "PATH"
	if d.BinDir != "" {
		where = d.BinDir + " or PATH"
	}
	return "", fmt.Errorf("%s was not found in %s: install PostgreSQL's client programs (on Debian: apt-get install postgresql-client) or set BUDDI_PG_BINDIR", name, where)
}

// command runs a client program against the database: the connection's parts reach it
// through the environment (PGPASSWORD is not visible to other accounts, unlike arguments).
func (d Database) command(ctx context.Context, name string, args ...string) (*exec.Cmd, error) {
	bin, err := d.tool(name)
	if err != nil {
		return nil, err
	}
	cc, err := pgconn.ParseConfig(d.OwnerDSN)
	if err != nil {
		return nil, fmt.Errorf("read the database's connection string: %w", err)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC",
		"PGHOST=" + cc.Host, "PGPORT=" + strconv.Itoa(int(cc.Port)), "PGUSER=" + cc.User,
		"PGPASSWORD=" + cc.Password, "PGDATABASE=" + cc.Database, "PGPASSFILE=/dev/null", "PGCONNECT_TIMEOUT=10"}
	if cc.TLSConfig == nil {
		cmd.Env = append(cmd.Env, "PGSSLMODE=disable")
	}
	cmd.Dir = "/"
	return cmd, nil
}

// runTool runs cmd and turns a failure into one sentence with the program's last words.
func runTool(cmd *exec.Cmd, doing string) error {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "\n"); i >= 0 && len(msg) > 2000 {
			msg = msg[i+1:]
		}
		return fmt.Errorf("%s failed (%v): %s", doing, err, msg)
	}
	return nil
}

// dumpInfo is what the dump's snapshot saw.
type dumpInfo struct {
	schemas    []string
	extensions []Extension
	rows       map[string]int64
	pgMajor    int
	pgVersion  string
}

// Extension is a PostgreSQL extension the dumped schemas use (memory's pg_trgm): a dump of
// buddi's schemas holds the objects that use it, not the extension, so a restore creates it
// first.
type Extension struct {
	Name   string `json:"name"`   // the extension, as CREATE EXTENSION names it
	Schema string `json:"schema"` // the schema it was created in
}

// installedExtensions are the extensions of the database but PostgreSQL's own plpgsql.
const installedExtensions = `SELECT e.extname, n.nspname FROM pg_extension e
	JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname <> 'plpgsql' ORDER BY 1`

// createExtensions creates exts in the database q reaches, each where it was, when it is
// not there yet.
func createExtensions(ctx context.Context, q interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}, exts []Extension) error {
	for _, e := range exts {
		sql := fmt.Sprintf("CREATE EXTENSION IF NOT EXISTS %s WITH SCHEMA %s",
			pgx.Identifier{e.Name}.Sanitize(), pgx.Identifier{e.Schema}.Sanitize())
		if _, err := q.Exec(ctx, sql); err != nil {
			return fmt.Errorf("create the extension %s the backup uses (it ships with PostgreSQL's contrib modules): %w", e.Name, err)
		}
	}
	return nil
}

// ownedSchemas are the schemas the connected role owns in its database, less PostgreSQL's own
// and public: core, river and each plugin's.
const ownedSchemas = `SELECT nspname FROM pg_namespace
	WHERE nspowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)
	  AND nspname NOT LIKE 'pg\_%' AND nspname NOT IN ('information_schema', 'public')
	ORDER BY 1`

// dump writes a custom-format pg_dump of every schema buddi owns to file, from one snapshot
// that the row counts are read from too, so the counts are the dump's own.
func (d Database) dump(ctx context.Context, file string) (dumpInfo, error) {
	var info dumpInfo
	conn, err := pgx.Connect(ctx, d.OwnerDSN)
	if err != nil {
		return info, fmt.Errorf("connect to the database to back it up: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return info, fmt.Errorf("begin the backup's snapshot: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var snapshot string
	if err := tx.QueryRow(ctx, `SELECT pg_export_snapshot()`).Scan(&snapshot); err != nil {
		return info, fmt.Errorf("export the backup's snapshot: %w", err)
	}
	if info.pgMajor, info.pgVersion, err = serverVersion(ctx, tx); err != nil {
		return info, err
	}
	rows, err := tx.Query(ctx, ownedSchemas)
	if err != nil {
		return info, fmt.Errorf("list buddi's schemas: %w", err)
	}
	if info.schemas, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return info, fmt.Errorf("list buddi's schemas: %w", err)
	}
	if len(info.schemas) == 0 {
		return info, errors.New("the database holds no schema of buddi's: there is nothing to back up (has `buddi serve` run here?)")
	}
	if info.rows, err = countRows(ctx, tx, info.schemas); err != nil {
		return info, err
	}
	rows, err = tx.Query(ctx, installedExtensions)
	if err != nil {
		return info, fmt.Errorf("list the database's extensions: %w", err)
	}
	if info.extensions, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Extension, error) {
		var e Extension
		return e, r.Scan(&e.Name, &e.Schema)
	}); err != nil {
		return info, fmt.Errorf("list the database's extensions: %w", err)
	}
	args := []string{"--format=custom", "--no-owner", "--no-privileges", "--snapshot=" + snapshot, "--file=" + file}
	for _, s := range info.schemas {
		args = append(args, "--schema="+s)
	}
	cmd, err := d.command(ctx, "pg_dump", args...)
	if err != nil {
		return info, err
	}
	if err := runTool(cmd, "pg_dump"); err != nil {
		return info, err
	}
	return info, tx.Commit(ctx)
}

// restore loads the custom-format dump at file into the (empty) database, in one transaction.
func (d Database) restore(ctx context.Context, file string) error {
	cc, err := pgconn.ParseConfig(d.OwnerDSN)
	if err != nil {
		return fmt.Errorf("read the database's connection string: %w", err)
	}
	cmd, err := d.command(ctx, "pg_restore", "--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction",
		"--dbname="+cc.Database, file)
	if err != nil {
		return err
	}
	return runTool(cmd, "pg_restore")
}

// querier is a connection or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func serverVersion(ctx context.Context, q querier) (int, string, error) {
	var num int
	var v string
	if err := q.QueryRow(ctx, `SELECT current_setting('server_version_num')::int, current_setting('server_version')`).Scan(&num, &v); err != nil {
		return 0, "", fmt.Errorf("read the server's version: %w", err)
	}
	return num / 10000, v, nil
}

// countRows counts the rows of every table in schemas, by "schema.table".
func countRows(ctx context.Context, q querier, schemas []string) (map[string]int64, error) {
	rows, err := q.Query(ctx, `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'r' AND n.nspname = ANY($1) ORDER BY 1, 2`, schemas)
	if err != nil {
		return nil, fmt.Errorf("list buddi's tables: %w", err)
	}
	type table struct{ schema, name string }
	tables, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (table, error) {
		var t table
		return t, r.Scan(&t.schema, &t.name)
	})
	if err != nil {
		return nil, fmt.Errorf("list buddi's tables: %w", err)
	}
	counts := make(map[string]int64, len(tables))
	for _, t := range tables {
		var n int64
		if err := q.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{t.schema, t.name}.Sanitize()).Scan(&n); err != nil {
			return nil, fmt.Errorf("count the rows of %s.%s: %w", t.schema, t.name, err)
		}
		counts[t.schema+"."+t.name] = n
	}
	return counts, nil
}

// compareRows says how got differs from want, or "" when they are the same.
func compareRows(want, got map[string]int64) string {
	var diffs []string
	for name, n := range want {
		if g, ok := got[name]; !ok {
			diffs = append(diffs, name+" is missing")
		} else if g != n {
			diffs = append(diffs, fmt.Sprintf("%s has %d rows where the manifest says %d", name, g, n))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			diffs = append(diffs, name+" is not in the manifest")
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}
