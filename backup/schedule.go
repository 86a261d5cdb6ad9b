package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

// Keep is how many scheduled backups are kept in <home>/backups.
const Keep = 7

// Every is how old the newest backup in <home>/backups may grow before the daily job takes one.
const Every = 24 * time.Hour

// scheduleKey is the core.system_flags row of the owner's switch; no row means on.
const scheduleKey = "backup.schedule"

// ScheduleOn reports whether the daily backup is switched on (it is, until the owner
// switches it off).
func ScheduleOn(ctx context.Context, db execer) (bool, error) {
	var raw []byte
	err := db.QueryRow(ctx, `SELECT value FROM core.system_flags WHERE key = $1`, scheduleKey).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("read whether the daily backup is on: %w", err)
	}
	var v struct {
		On bool `json:"on"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return false, fmt.Errorf("read whether the daily backup is on: %w", err)
	}
	return v.On, nil
}

// SetSchedule switches the daily backup on or off.
func SetSchedule(ctx context.Context, db execer, on bool) error {
	value, _ := json.Marshal(map[string]any{"on": on, "by": "cli", "at": time.Now().UTC()})
	if _, err := db.Exec(ctx, `INSERT INTO core.system_flags (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`, scheduleKey, value); err != nil {
		return fmt.Errorf("switch the daily backup: %w", err)
	}
	return nil
}

// Newest returns the newest archive in dir named by DefaultName and when it was written; ""
// when there is none.
func Newest(dir string) (string, time.Time, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("list the backups: %w", err)
	}
	var name string
	var at time.Time
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(n, "buddi-") || !(strings.HasSuffix(n, ".tar.gz") || strings.HasSuffix(n, ".tar.gz.age")) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		if fi.ModTime().After(at) {
			name, at = n, fi.ModTime()
		}
	}
	if name == "" {
		return "", time.Time{}, nil
	}
	return filepath.Join(dir, name), at, nil
}

// DailyArgs is the job that takes the daily backup when the newest is older than Every.
type DailyArgs struct{}

// Kind names the job.
func (DailyArgs) Kind() string { return "backup.daily" }

// Daily is the daily backup as a queue part (queue.Wire): a periodic job every hour (the first
// an hour after start, so a start is not slowed by a dump) that takes a backup when the newest
// in <home>/backups is older than Every, keeping the last Keep. It
// runs in the queue, so a paused buddi (and one in recovery mode) takes none. Scheduled
// archives are not encrypted: no passphrase is at hand unattended; they are 0600 in a 0700
// directory of the home, and hold no secrets.
type Daily struct {
	// Pool reads the owner's switch.
	Pool *pgxpool.Pool
	// OwnerDSN gives the owner's connection string at each run (it is read from its file).
	OwnerDSN func() (string, error)
	// BinDir holds pg_dump; "" finds it.
	BinDir string
	// Files are the owner's files to include.
	Files Files
	// Log hears each backup taken and each failure.
	Log *slog.Logger
}

// Register adds the daily backup's worker.
func (d Daily) Register(w *river.Workers) error {
	return river.AddWorkerSafely(w, &dailyWorker{d: d})
}

// Periodic returns the hourly check.
func (Daily) Periodic() []*river.PeriodicJob {
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(time.Hour), func() (river.JobArgs, *river.InsertOpts) {
		return DailyArgs{}, &river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByPeriod: time.Hour}}
	}, nil)}
}

type dailyWorker struct {
	river.WorkerDefaults[DailyArgs]
	d Daily
}

// Timeout bounds one backup.
func (w *dailyWorker) Timeout(*river.Job[DailyArgs]) time.Duration { return time.Hour }

// Work takes the backup when it is due and switched on.
func (w *dailyWorker) Work(ctx context.Context, _ *river.Job[DailyArgs]) error {
	_, err := w.d.RunOnce(ctx, time.Now())
	return err
}

// RunOnce takes a backup into <home>/backups when the schedule is on and the newest is older
// than Every at now, then prunes to Keep. It returns the archive written, or "" when none was due.
func (d Daily) RunOnce(ctx context.Context, now time.Time) (string, error) {
	log := d.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	on, err := ScheduleOn(ctx, d.Pool)
	if err != nil || !on {
		return "", err
	}
	dir := Dir(d.Files.Home)
	if _, at, err := Newest(dir); err != nil {
		return "", err
	} else if !at.IsZero() && now.Sub(at) < Every {
		return "", nil
	}
	dsn, err := d.OwnerDSN()
	if err != nil {
		return "", err
	}
	res, err := Create(ctx, Database{OwnerDSN: dsn, BinDir: d.BinDir}, d.Files, CreateOptions{To: filepath.Join(dir, DefaultName(now, false))})
	if err != nil {
		log.Warn("the daily backup failed", "service", "backup", "err", err)
		return "", err
	}
	removed, err := Prune(dir, Keep)
	if err != nil {
		log.Warn("old backups could not be removed", "service", "backup", "err", err)
	}
	log.Info("daily backup taken", "service", "backup", "path", res.Path, "bytes", res.Size, "took", res.Took.Round(time.Millisecond), "removed", len(removed))
	return res.Path, nil
}
