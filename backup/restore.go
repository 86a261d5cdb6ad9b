package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"buddi/config"
	"buddi/core/seal"
	"buddi/datadir"
	"buddi/dbsource"
)

// keptInEmptyHome are what a home may hold and still count as empty for a restore: the
// secrets the owner may have copied over on purpose (the original seal.key keeps the sealed
// rows valid; the vault its values), a key file, the lock, and logs.
var keptInEmptyHome = map[string]bool{
	seal.FileName: true, "vault.json": true, "vault.key": true, "buddi.lock": true, "cli.token": true, "metrics.token": true, "logs": true, "serve.log": true,
}

// NotEmptyError refuses a restore into a home that holds a buddi already.
type NotEmptyError struct {
	Home  string   // the data directory
	Found []string // what is in it
}

// Error says what happened in one sentence.
func (e *NotEmptyError) Error() string {
	return fmt.Sprintf("%s is not empty (it holds %s): a backup is restored only into an empty home, so set BUDDI_HOME to a new directory and run the restore again",
		e.Home, strings.Join(e.Found, ", "))
}

// RestoreOptions tune Restore.
type RestoreOptions struct {
	// Passphrase opens an encrypted archive.
	Passphrase string
	// AgentsDir and SkillsDir are where the owner's agent and skill files go
	// (agents.OwnerDirs). Default <home>/agents and <home>/skills.
	AgentsDir, SkillsDir string
	// Progress hears a line before each long step; nil: silence.
	Progress func(string)
	// Log receives what the embedded cluster does. Default: discard.
	Log *slog.Logger
}

// Restored says what Restore did.
type Restored struct {
	Manifest Manifest      `json:"manifest"`  // the archive's manifest
	Home     string        `json:"home"`      // the data directory restored into
	Rows     int64         `json:"rows"`      // rows restored, all told
	Files    int           `json:"files"`     // files put in place
	SealKept bool          `json:"seal_kept"` // the home already held a seal.key (the sealed rows may still check)
	Took     time.Duration `json:"took_ns"`   // how long it took
}

// Restore restores the archive at file into cfg's data directory, which must be empty (see
// NotEmptyError), and leaves buddi in recovery mode (EnterRecovery): the database (on the
// embedded cluster, created here; with DATABASE_URL, a database without buddi's schemas),
// then the files. The counts are checked against the manifest before anything is migrated.
func Restore(ctx context.Context, cfg config.Config, file string, opts RestoreOptions) (*Restored, error) {
	start := time.Now()
	say := opts.Progress
	if say == nil {
		say = func(string) {}
	}
	if opts.AgentsDir == "" {
		opts.AgentsDir = filepath.Join(cfg.Home, "agents")
	}
	if opts.SkillsDir == "" {
		opts.SkillsDir = filepath.Join(cfg.Home, "skills")
	}
	if err := checkEmpty(cfg.Home, opts.AgentsDir, opts.SkillsDir); err != nil {
		return nil, err
	}
	if err := datadir.PrepareHome(cfg.Home); err != nil {
		return nil, err
	}
	_, err := os.Stat(filepath.Join(cfg.Home, seal.FileName))
	sealKept := err == nil
	staging, err := os.MkdirTemp(cfg.Home, ".restore-")
	if err != nil {
		return nil, fmt.Errorf("create the restore's work directory: %w", err)
	}
	defer os.RemoveAll(staging)
	say("checking every member against the manifest's checksums")
	u, err := Unpack(file, opts.Passphrase, staging, say)
	if err != nil {
		return nil, err
	}
	say("starting the database")
	src, err := dbsource.Open(ctx, cfg, dbsource.Options{CreateIfMissing: true, Log: opts.Log})
	if err != nil {
		return nil, err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = src.Close(stopCtx)
	}()
	var existing int
	if err := src.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = ANY($1)`, u.Manifest.Schemas).Scan(&existing); err != nil {
		return nil, fmt.Errorf("look at the database: %w", err)
	}
	if existing > 0 {
		return nil, fmt.Errorf("the database (%s) already holds buddi's schemas: a backup is restored only into an empty database", src.Target)
	}
	dsn, err := src.OwnerDSN()
	if err != nil {
		return nil, err
	}
	counts, err := restoreAndCount(ctx, Database{OwnerDSN: dsn, BinDir: cfg.PGBinDir}, u, say)
	if err != nil {
		return nil, err
	}
	say("bringing the schemas up to this buddi's version")
	if _, err := src.Migrate(ctx, opts.Log); err != nil {
		return nil, fmt.Errorf("apply migrations to the restored database: %w", err)
	}
	if err := EnterRecovery(ctx, src.Pool, Recovery{Since: time.Now().UTC(), Archive: filepath.Base(file),
		TakenAt: u.Manifest.CreatedAt, BuddiVersion: u.Manifest.BuddiVersion, SealKept: sealKept}); err != nil {
		return nil, err
	}
	say("putting the files in place")
	n, err := placeFiles(staging, cfg.Home, opts.AgentsDir, opts.SkillsDir)
	if err != nil {
		return nil, err
	}
	res := &Restored{Manifest: u.Manifest, Home: cfg.Home, Files: n, SealKept: sealKept}
	for _, c := range counts {
		res.Rows += c
	}
	res.Took = time.Since(start)
	return res, nil
}

// checkEmpty refuses a home (or an agents or skills directory) with anything in it but
// keptInEmptyHome.
func checkEmpty(home string, dirs ...string) error {
	var found []string
	entries, err := os.ReadDir(home)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", home, err)
	}
	for _, e := range entries {
		if !keptInEmptyHome[e.Name()] {
			found = append(found, e.Name())
		}
	}
	if len(found) > 0 {
		sort.Strings(found)
		if len(found) > 5 {
			found = append(found[:5], "…")
		}
		return &NotEmptyError{Home: home, Found: found}
	}
	for _, d := range dirs {
		if rel, err := filepath.Rel(home, d); err == nil && !strings.HasPrefix(rel, "..") {
			continue // inside the home: checked above
		}
		if entries, err := os.ReadDir(d); err == nil && len(entries) > 0 {
			return &NotEmptyError{Home: d, Found: []string{entries[0].Name()}}
		}
	}
	return nil
}

// placeFiles moves the unpacked files to where buddi reads them.
func placeFiles(staging, home, agentsDir, skillsDir string) (int, error) {
	n := 0
	for _, m := range []struct{ member, dest string }{
		{"artifacts", filepath.Join(home, "artifacts")},
		{"agents", agentsDir},
		{"skills", skillsDir},
		{"plugins.json", filepath.Join(home, "plugins.json")},
		{"timezone", filepath.Join(home, "timezone")},
	} {
		from := filepath.Join(staging, m.member)
		if _, err := os.Lstat(from); errors.Is(err, os.ErrNotExist) {
			continue
		}
		c, err := moveTree(from, m.dest)
		if err != nil {
			return n, fmt.Errorf("put %s in place: %w", m.dest, err)
		}
		n += c
	}
	return n, nil
}

// moveTree moves from to dest (renaming when on one file system, copying otherwise) and
// counts the files.
func moveTree(from, dest string) (int, error) {
	n := 0
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dest, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return err
		}
		n++
		if err := os.Rename(p, target); err == nil {
			return nil
		}
		return copyFile(p, target)
	})
	return n, err
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
