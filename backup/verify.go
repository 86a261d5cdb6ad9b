package backup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/internal/bytesize"
	"buddi/pgcluster"
)

// VerifyOptions tune Verify.
type VerifyOptions struct {
	// Passphrase opens an encrypted archive.
	Passphrase string
	// BinDir holds the PostgreSQL server and client programs; "" finds them (BUDDI_PG_BINDIR).
	BinDir string
	// Progress hears a line before each long step; nil: silence.
	Progress func(string)
}

// Verified is what Verify found.
type Verified struct {
	Manifest Manifest      `json:"manifest"` // the archive's manifest
	Tables   int           `json:"tables"`   // tables restored and counted
	Rows     int64         `json:"rows"`     // their rows, all told
	Took     time.Duration `json:"took_ns"`  // how long it took
}

// Verify checks the archive at file: every member against the manifest's checksums, then the
// dump restored into a throwaway cluster (started in a temporary directory and removed
// after) whose row counts must be the manifest's.
func Verify(ctx context.Context, file string, opts VerifyOptions) (*Verified, error) {
	start := time.Now()
	say := opts.Progress
	if say == nil {
		say = func(string) {}
	}
	tmp, err := os.MkdirTemp("", "buddi-verify-")
	if err != nil {
		return nil, fmt.Errorf("create a temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	say("checking every member against the manifest's checksums")
	files := filepath.Join(tmp, "files")
	if err := os.Mkdir(files, 0o700); err != nil {
		return nil, fmt.Errorf("create a temporary directory: %w", err)
	}
	u, err := Unpack(file, opts.Passphrase, files, say)
	if err != nil {
		return nil, err
	}
	say("starting a throwaway database")
	cluster := pgcluster.New(pgcluster.Options{Dir: filepath.Join(tmp, "pg"), BinDir: opts.BinDir, Fast: true, DieWithParent: true})
	if err := cluster.Start(ctx); err != nil {
		return nil, fmt.Errorf("start a throwaway database: %w", err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = cluster.Stop(stopCtx)
	}()
	admin, err := cluster.OwnerDSN("postgres")
	if err != nil {
		return nil, err
	}
	if err := createDatabase(ctx, admin, "buddi"); err != nil {
		return nil, err
	}
	dsn, err := cluster.OwnerDSN("buddi")
	if err != nil {
		return nil, err
	}
	db := Database{OwnerDSN: dsn, BinDir: opts.BinDir}
	counts, err := restoreAndCount(ctx, db, u, say)
	if err != nil {
		return nil, err
	}
	v := &Verified{Manifest: u.Manifest, Tables: len(counts), Took: time.Since(start)}
	for _, n := range counts {
		v.Rows += n
	}
	return v, nil
}

// restoreAndCount restores u's dump into db and checks its row counts against the manifest.
func restoreAndCount(ctx context.Context, db Database, u *Unpacked, say func(string)) (map[string]int64, error) {
	conn, err := pgx.Connect(ctx, db.OwnerDSN)
	if err != nil {
		return nil, fmt.Errorf("connect to the database to restore into: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	major, v, err := serverVersion(ctx, conn)
	if err != nil {
		return nil, err
	}
	if major < u.Manifest.PGMajor {
		return nil, fmt.Errorf("the backup was taken from PostgreSQL %d and this machine runs PostgreSQL %s: install PostgreSQL %d or newer (or set BUDDI_PG_BINDIR to its bin directory)",
			u.Manifest.PGMajor, v, u.Manifest.PGMajor)
	}
	dump := filepath.Join(u.Dir, DumpName)
	fi, err := os.Stat(dump)
	if err != nil {
		return nil, &CorruptError{Member: DumpName, Why: "is missing"}
	}
	say(fmt.Sprintf("restoring the database dump (%s)", bytesize.String(fi.Size())))
	if err := createExtensions(ctx, conn, u.Manifest.Extensions); err != nil {
		return nil, err
	}
	if err := db.restore(ctx, dump); err != nil {
		return nil, err
	}
	say("counting the rows of every table")
	counts, err := countRows(ctx, conn, u.Manifest.Schemas)
	if err != nil {
		return nil, err
	}
	if diff := compareRows(u.Manifest.Rows, counts); diff != "" {
		return nil, fmt.Errorf("the restored database is not what the manifest describes: %s", diff)
	}
	return counts, nil
}

func createDatabase(ctx context.Context, adminDSN, name string) error {
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return fmt.Errorf("connect to the throwaway database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}
