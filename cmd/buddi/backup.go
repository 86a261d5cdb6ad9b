package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"buddi/agents"
	"buddi/backup"
	"buddi/datadir"
	"buddi/dbsource"
	"buddi/doctor"
)

type backupCmd struct {
	Create   backupCreateCmd   `cmd:"" help:"Write a backup: the database, the artifacts, your agent and skill files, plugins.json, the time zone (never a secret)."`
	Verify   backupVerifyCmd   `cmd:"" help:"Check a backup: its checksums, then its dump restored into a throwaway database and counted."`
	Restore  backupRestoreCmd  `cmd:"" help:"Restore a backup into an empty home; buddi then starts in recovery mode."`
	Schedule backupScheduleCmd `cmd:"" help:"Switch the daily backup (the last 7 kept in <home>/backups) on or off, or show it."`
}

// passphraseFlags are how a passphrase is given: typed without echo, or on standard input.
type passphraseFlags struct {
	PassphraseStdin bool `name:"passphrase-stdin" help:"Read the passphrase from standard input (its first line) instead of the terminal."`
}

// read gets the passphrase; confirm asks twice on a terminal (when making an archive).
func (p passphraseFlags) read(env *runEnv, confirm bool) (string, error) {
	var pass string
	if p.PassphraseStdin {
		line, err := bufio.NewReader(os.Stdin).ReadString('\n')
		if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
			return "", fmt.Errorf("read the passphrase from standard input: %w", err)
		}
		pass = strings.TrimRight(line, "\r\n")
	} else {
		if !term.IsTerminal(int(os.Stdin.Fd())) {
			return "", &exitError{code: doctor.ExitUsage, err: errors.New("a passphrase is needed and standard input is not a terminal: pass --passphrase-stdin and give it on standard input")}
		}
		ask := func(q string) (string, error) {
			raw, err := readHidden(int(os.Stdin.Fd()), env.stderr, q+" (not shown): ")
			if err != nil {
				return "", fmt.Errorf("read the passphrase from the terminal: %w", err)
			}
			return string(raw), nil
		}
		var err error
		if pass, err = ask("Passphrase"); err != nil {
			return "", err
		}
		if confirm {
			again, err := ask("The same passphrase again")
			if err != nil {
				return "", err
			}
			if again != pass {
				return "", &exitError{code: doctor.ExitUsage, err: errors.New("the two passphrases differ: run the command again")}
			}
		}
	}
	if pass == "" {
		return "", &exitError{code: doctor.ExitUsage, err: errors.New("the passphrase is empty: give one")}
	}
	return pass, nil
}

// progress prints a step to stderr with the time since start.
func progress(env *runEnv) func(string) {
	start := time.Now()
	return func(line string) {
		fmt.Fprintf(env.stderr, "[%5.1fs] %s…\n", time.Since(start).Seconds(), line)
	}
}

type backupCreateCmd struct {
	To      string `help:"Where to write the archive. Default: <home>/backups/buddi-<time>.tar.gz[.age]." type:"path"`
	Encrypt bool   `help:"Encrypt the archive with a passphrase (age, scrypt)."`
	passphraseFlags
	JSON bool `help:"Print the result as JSON."`
}

func (c backupCreateCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	if c.PassphraseStdin && !c.Encrypt {
		return &exitError{code: doctor.ExitUsage, err: errors.New("--passphrase-stdin goes with --encrypt")}
	}
	var pass string
	if c.Encrypt {
		if pass, err = c.read(env, true); err != nil {
			return err
		}
	}
	to := c.To
	if to == "" {
		to = filepath.Join(backup.Dir(cfg.Home), backup.DefaultName(time.Now(), c.Encrypt))
	}
	src, err := dbsource.Open(env.ctx, cfg, dbsource.Options{Log: env.log})
	if err != nil {
		return err
	}
	defer closeSource(src)
	dsn, err := src.OwnerDSN()
	if err != nil {
		return err
	}
	agentsDir, skillsDir := agents.OwnerDirs(cfg.Home, os.Getenv)
	res, err := backup.Create(env.ctx, backup.Database{OwnerDSN: dsn, BinDir: cfg.PGBinDir},
		backup.Files{Home: cfg.Home, AgentsDir: agentsDir, SkillsDir: skillsDir},
		backup.CreateOptions{To: to, Passphrase: pass, Progress: progress(env)})
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(env, res)
	}
	var rows int64
	for _, n := range res.Manifest.Rows {
		rows += n
	}
	fmt.Fprintf(env.stdout, "Backup written to %s (%s, %d members, %d rows in %d tables, %s).\n",
		res.Path, sizeOf(res.Size), len(res.Manifest.Members)+1, rows, len(res.Manifest.Rows), res.Took.Round(time.Millisecond))
	fmt.Fprintln(env.stdout, "It holds no secret: keep seal.key and the vault (and its key) safe on their own; without seal.key a restore must sign in, pair and grant again.")
	if !c.Encrypt {
		fmt.Fprintln(env.stdout, "It is not encrypted: it holds your conversations and files (--encrypt asks for a passphrase).")
	}
	return nil
}

type backupVerifyCmd struct {
	File string `arg:"" help:"The archive." type:"existingfile"`
	passphraseFlags
	JSON bool `help:"Print the result as JSON."`
}

func (c backupVerifyCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	pass, err := passphraseFor(env, c.File, c.passphraseFlags)
	if err != nil {
		return err
	}
	v, err := backup.Verify(env.ctx, c.File, backup.VerifyOptions{Passphrase: pass, BinDir: cfg.PGBinDir, Progress: progress(env)})
	if err != nil {
		return backupExit(err)
	}
	if c.JSON {
		return writeJSON(env, v)
	}
	fmt.Fprintf(env.stdout, "The backup is sound: %d members match their checksums, and its dump restores with the %d rows of %d tables the manifest counts (taken %s by buddi %s, PostgreSQL %d; checked in %s).\n",
		len(v.Manifest.Members)+1, v.Rows, v.Tables, v.Manifest.CreatedAt.Local().Format("2006-01-02 15:04"), v.Manifest.BuddiVersion, v.Manifest.PGMajor, v.Took.Round(time.Millisecond))
	return nil
}

type backupRestoreCmd struct {
	File string `arg:"" help:"The archive." type:"existingfile"`
	passphraseFlags
	JSON bool `help:"Print the result as JSON."`
}

func (c backupRestoreCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	if !cfg.Embedded() {
		return &exitError{code: doctor.ExitUsage, err: errors.New("restore works on buddi's own database: unset DATABASE_URL and restore into an empty BUDDI_HOME")}
	}
	pass, err := passphraseFor(env, c.File, c.passphraseFlags)
	if err != nil {
		return err
	}
	agentsDir, skillsDir := agents.OwnerDirs(cfg.Home, os.Getenv)
	res, err := backup.Restore(env.ctx, cfg, c.File, backup.RestoreOptions{Passphrase: pass, AgentsDir: agentsDir, SkillsDir: skillsDir,
		Progress: progress(env), Log: env.log})
	if err != nil {
		return backupExit(err)
	}
	if c.JSON {
		return writeJSON(env, res)
	}
	out := env.stdout
	fmt.Fprintf(out, "Restored %s into %s: %d rows, %d files (taken %s by buddi %s; %s).\n", filepath.Base(c.File), res.Home, res.Rows, res.Files,
		res.Manifest.CreatedAt.Local().Format("2006-01-02 15:04"), res.Manifest.BuddiVersion, res.Took.Round(time.Millisecond))
	if res.SealKept {
		fmt.Fprintln(out, "This home already held a seal.key: if it is the original one, sign-in sessions, paired phones and standing permissions still hold.")
	} else {
		fmt.Fprintln(out, "Secrets are never in a backup, and this home had no seal.key: every sealed row is void, so sign in again (buddi dashboard), pair your phone again (buddi telegram pair) and grant standing permissions again; approvals decided before the backup no longer check.")
	}
	fmt.Fprintln(out, "Set the vault's secrets again (buddi init, or buddi vault set NAME) unless you copied vault.json and its key over.")
	fmt.Fprintln(out, "buddi starts in recovery mode: nothing unattended runs. Read the checklist with `buddi recovery`, then leave recovery with `buddi resume`.")
	return nil
}

// passphraseFor reads a passphrase when the archive is encrypted.
func passphraseFor(env *runEnv, file string, p passphraseFlags) (string, error) {
	enc, err := backup.Encrypted(file)
	if err != nil {
		return "", err
	}
	if !enc {
		return "", nil
	}
	return p.read(env, false)
}

// backupExit maps a wrong passphrase to a usage error (2); a damaged archive stays a problem (1).
func backupExit(err error) error {
	var ne *backup.NotEmptyError
	switch {
	case errors.Is(err, backup.ErrWrongPassphrase):
		return &exitError{code: doctor.ExitUsage, err: errors.New("the passphrase does not open this backup: give the one it was made with")}
	case errors.As(err, &ne), errors.Is(err, datadir.ErrLocked):
		return &exitError{code: doctor.ExitDoFirst, err: err}
	}
	return err
}

type backupScheduleCmd struct {
	Switch string `arg:"" optional:"" enum:"on,off,status," default:"" help:"on, off, or nothing to show it."`
	JSON   bool   `help:"Print the result as JSON."`
}

func (c backupScheduleCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	if c.Switch == "on" || c.Switch == "off" {
		if err := backup.SetSchedule(env.ctx, src.Pool, c.Switch == "on"); err != nil {
			return err
		}
	}
	on, err := backup.ScheduleOn(env.ctx, src.Pool)
	if err != nil {
		return err
	}
	newest, at, err := backup.Newest(backup.Dir(cfg.Home))
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(env, map[string]any{"on": on, "dir": backup.Dir(cfg.Home), "keep": backup.Keep, "newest": newest, "newest_at": at})
	}
	state := "on"
	if !on {
		state = "off"
	}
	fmt.Fprintf(env.stdout, "The daily backup is %s: buddi serve writes one to %s when the newest is a day old, and keeps the last %d.\n", state, backup.Dir(cfg.Home), backup.Keep)
	if newest != "" {
		fmt.Fprintf(env.stdout, "Newest: %s (%s).\n", newest, at.Local().Format("2006-01-02 15:04"))
	}
	return nil
}

func sizeOf(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
