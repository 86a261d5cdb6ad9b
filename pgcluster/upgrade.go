package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"
)

// UpgradeOptions say which cluster Upgrade moves to the newest PostgreSQL installed.
type UpgradeOptions struct {
	// Dir is the cluster's directory (Options.Dir). Nothing may be running it: the caller
	// holds the data directory's lock.
	Dir string
	// Progress receives one line per step, for the owner. Default: none.
	Progress func(line string)
	// Log receives what the clusters do. Default: discard.
	Log *slog.Logger
	// Fast is for tests: clusters without fsync.
	Fast bool
}

// UpgradeResult says what Upgrade did.
type UpgradeResult struct {
	// From is the major version the cluster had.
	From string `json:"from"`
	// To is the major version it has now; equal to From when there was nothing to do.
	To string `json:"to"`
	// Kept is the directory that holds the old cluster, untouched ("" when nothing was done).
	Kept string `json:"kept,omitempty"`
}

// Upgrade moves the cluster in opts.Dir from the major version in its PG_VERSION to the
// newest installed, with pg_upgrade copying (never linking) into a new directory, which then
// takes the old one's place in one atomic exchange; the old cluster stays as it was, in
// Dir.old-<major>, the backup to go back to. Both versions' programs must be installed: when
// the old ones are missing, the error says which package to install (a dump and restore
// would need the old pg_dump just the same).
func Upgrade(ctx context.Context, opts UpgradeOptions) (*UpgradeResult, error) {
	major, dataDir, err := clusterMajor(opts.Dir)
	if err != nil {
		return nil, err
	}
	if major == "" {
		return nil, fmt.Errorf("there is no database in %s yet: nothing to upgrade", opts.Dir)
	}
	all := defaultSearch.installs()
	if len(all) == 0 {
		return nil, &NoBinariesError{Looked: defaultSearch.looked()}
	}
	newest := all[0]
	switch c := compareMajor(major, newest.Major); {
	case c == 0:
		return &UpgradeResult{From: major, To: major}, nil
	case c > 0:
		return nil, &VersionError{DataDir: dataDir, Cluster: major, Installed: []string{newest.Major}}
	}
	for _, in := range all {
		if in.Major == major {
			return upgrade(ctx, opts, in, newest)
		}
	}
	return nil, &OldBinariesError{DataDir: dataDir, Major: major}
}

// OldBinariesError means the programs of the version that made the cluster, which any upgrade
// needs, are not installed.
type OldBinariesError struct {
	// DataDir is the cluster's data directory.
	DataDir string
	// Major is the version that made it.
	Major string
}

// Error says what to install, in one sentence.
func (e *OldBinariesError) Error() string {
	return fmt.Sprintf("The database in %s was made by PostgreSQL %s, whose programs are not installed here: pg_upgrade needs them, and so would a dump and restore (only PostgreSQL %s's pg_dump can read it), so install %s and run `buddi db upgrade` again.",
		e.DataDir, e.Major, e.Major, installHint(e.Major))
}

// Unwrap gives ErrNoBinaries: something must be installed first.
func (e *OldBinariesError) Unwrap() error { return ErrNoBinaries }

// upgrade runs pg_upgrade from one installation to another (the same major works too, which
// the tests use where only one is installed).
func upgrade(ctx context.Context, opts UpgradeOptions, from, to Install) (*UpgradeResult, error) {
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	if _, err := os.Stat(filepath.Join(to.BinDir, "pg_upgrade")); err != nil {
		return nil, fmt.Errorf("PostgreSQL %s's pg_upgrade is not in %s: install it (on Debian it comes with postgresql-%s)", to.Major, to.BinDir, to.Major)
	}
	dir := filepath.Clean(opts.Dir)
	kept := dir + ".old-" + from.Major
	for n := 2; exists(kept); n++ {
		kept = dir + ".old-" + from.Major + "-" + strconv.Itoa(n)
	}

	progress(fmt.Sprintf("checking the PostgreSQL %s cluster in %s (started and stopped cleanly)", from.Major, dir))
	old := New(Options{Dir: dir, BinDir: from.BinDir, Log: opts.Log, Fast: opts.Fast})
	if err := old.Start(ctx); err != nil {
		return nil, fmt.Errorf("start the PostgreSQL %s cluster before upgrading it: %w", from.Major, err)
	}
	// pg_upgrade wants the new cluster's locale as the old one's: a cluster made before new
	// ones took C.UTF-8 as their character type keeps its own.
	ctype, ctypeErr := old.characterType(ctx)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	err := old.Stop(stopCtx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("stop the PostgreSQL %s cluster before upgrading it: %w", from.Major, err)
	}
	if ctypeErr != nil {
		return nil, fmt.Errorf("read the PostgreSQL %s cluster's character type before upgrading it: %w", from.Major, ctypeErr)
	}
	ownerPW, err := readPassword(old.PasswordFile(Owner))
	if err != nil {
		return nil, err
	}
	appPW, err := readPassword(old.PasswordFile(App))
	if err != nil {
		return nil, err
	}

	// The new cluster is made beside the old one, with the same passwords (pg_upgrade brings
	// the roles over, verifiers and all). A failed attempt's leftovers go first.
	next := New(Options{Dir: dir + ".upgrade", BinDir: to.BinDir, Log: opts.Log, Fast: opts.Fast})
	if err := next.discard(); err != nil {
		return nil, err
	}
	for role, pw := range map[string]string{Owner: ownerPW, App: appPW} {
		if err := writeNewFile(next.PasswordFile(role), pw+"\n"); err != nil {
			return nil, err
		}
	}
	progress(fmt.Sprintf("making a PostgreSQL %s cluster in %s", to.Major, next.opts.Dir))
	if err := next.prepare(); err != nil {
		return nil, err
	}
	next.initArgs = []string{"--lc-ctype=" + ctype}
	if compareMajor(to.Major, "18") >= 0 && !checksums(ctx, old) {
		// initdb turns data checksums on from 18, and pg_upgrade wants both clusters alike.
		next.initArgs = append(next.initArgs, "--no-data-checksums")
	}
	if err := next.initdb(ctx, ownerPW); err != nil {
		return nil, err
	}

	progress(fmt.Sprintf("copying the data from PostgreSQL %s to %s with pg_upgrade (the old cluster is only read)", from.Major, to.Major))
	cmd := next.command("pg_upgrade", "--old-bindir="+from.BinDir, "--new-bindir="+to.BinDir,
		"--old-datadir="+old.DataDir(), "--new-datadir="+next.DataDir(), "--username="+Owner,
		"--socketdir="+next.SocketDir()) // copying is pg_upgrade's default: never --link
	if opts.Fast && compareMajor(to.Major, "15") >= 0 {
		cmd.Args = append(cmd.Args, "--no-sync")
	}
	cmd.Env = append(cmd.Env, "PGPASSWORD="+ownerPW)
	// pg_upgrade writes its reports in its working directory: the new cluster's own.
	cmd.Dir = next.opts.Dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := runCtx(ctx, cmd); err != nil {
		opts.logger().Error("pg_upgrade failed", "err", err, "output", out.String())
		return nil, fmt.Errorf("pg_upgrade from PostgreSQL %s to %s failed (%v: %s); the database in %s is unchanged, and the attempt is in %s",
			from.Major, to.Major, err, lastLines(out.String(), 3), dir, next.opts.Dir)
	}

	progress(fmt.Sprintf("starting the PostgreSQL %s cluster once to check it", to.Major))
	if err := next.Start(ctx); err != nil {
		return nil, fmt.Errorf("start the upgraded cluster in %s: %w; the database in %s is unchanged", next.opts.Dir, err, dir)
	}
	stopCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	err = next.Stop(stopCtx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("stop the upgraded cluster in %s: %w; the database in %s is unchanged", next.opts.Dir, err, dir)
	}

	// One exchange puts the new cluster in place: at every moment dir holds a whole cluster.
	progress(fmt.Sprintf("putting the PostgreSQL %s cluster in place; the old one is kept in %s", to.Major, kept))
	if err := unix.Renameat2(unix.AT_FDCWD, next.opts.Dir, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE); err != nil {
		return nil, fmt.Errorf("exchange %s with the upgraded %s: %w; the database in %s is unchanged", dir, next.opts.Dir, err, dir)
	}
	if err := os.Rename(next.opts.Dir, kept); err != nil {
		return nil, fmt.Errorf("keep the old cluster as %s: %w (it is in %s; the upgraded one is in place)", kept, err, next.opts.Dir)
	}
	for _, role := range []string{Owner, App} {
		_ = os.Remove(next.PasswordFile(role))
	}
	_ = os.Remove(next.LogFile())
	return &UpgradeResult{From: from.Major, To: to.Major, Kept: kept}, nil
}

// discard removes what an earlier, failed upgrade left of this cluster.
func (c *Cluster) discard() error {
	for _, p := range []string{c.opts.Dir, c.PasswordFile(Owner), c.PasswordFile(App), c.LogFile()} {
		if err := os.RemoveAll(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s, left by an earlier upgrade: %w", p, err)
		}
	}
	return nil
}

func (o UpgradeOptions) logger() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// writeNewFile creates path (0600, never through a link) holding content.
func writeNewFile(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// checksums reports whether c's cluster has data checksums on, by its pg_controldata.
func checksums(ctx context.Context, c *Cluster) bool {
	cmd := c.command("pg_controldata", "-D", c.DataDir())
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := runCtx(ctx, cmd); err != nil {
		return false
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "Data page checksum version" {
			return strings.TrimSpace(v) != "0"
		}
	}
	return false
}

// characterType is the running cluster's character type (template1's, which initdb set).
func (c *Cluster) characterType(ctx context.Context) (string, error) {
	pw, err := readPassword(c.PasswordFile(Owner))
	if err != nil {
		return "", err
	}
	cfg, err := c.connConfig(Owner, pw, "postgres")
	if err != nil {
		return "", err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var ctype string
	if err := conn.QueryRow(ctx, `SELECT datctype FROM pg_database WHERE datname = 'template1'`).Scan(&ctype); err != nil {
		return "", err
	}
	if ctype == "" || strings.ContainsAny(ctype, " \t\n'\"") {
		return "", fmt.Errorf("its character type %q is not a locale name initdb takes", ctype)
	}
	return ctype, nil
}
