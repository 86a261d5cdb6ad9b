package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/agents"
	"buddi/backup"
	"buddi/config"
	"buddi/dbsource"
)

// announceRecovery tells the log, at start, that this buddi was restored and holds its work
// (the pause that recovery is: queue.HoldIfPaused keeps the queues paused, sentinels and
// sources are never due), with what the owner's checklist holds.
//
// It is only a word to the log: a database that cannot answer it now (it is restarting) does
// not stop buddi, whose pause holds the work either way.
func announceRecovery(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	r, err := backup.InRecovery(ctx, pool)
	if err != nil || r == nil {
		if err != nil {
			log.Warn("whether buddi is in recovery mode could not be read; `buddi recovery` says", "service", "recovery", "err", err)
		}
		return nil
	}
	list, err := backup.ReadChecklist(ctx, pool)
	if err != nil || list.Recovery == nil {
		log.Warn(fmt.Sprintf("buddi was restored from a backup (%s) and is in recovery mode: nothing unattended runs. Run `buddi recovery` for the checklist, then `buddi resume`.", r.Archive),
			"service", "recovery", "err", err)
		return nil
	}
	log.Warn(fmt.Sprintf("buddi was restored from a backup (%s, taken %s) and is in recovery mode: nothing unattended runs; %d approved actions wait to run and %d effects have an unknown outcome. Run `buddi recovery` for the checklist, then `buddi resume`.",
		list.Recovery.Archive, list.Recovery.TakenAt.Format("2006-01-02 15:04 MST"), len(list.Approved), len(list.Unknown)),
		"service", "recovery")
	return nil
}

// recoveryNote is /api/health's word on recovery mode: "" outside it. Recovery is the owner's
// to leave, not a degraded buddi, so it is no problem of the report.
func recoveryNote(ctx context.Context, pool *pgxpool.Pool) string {
	r, err := backup.InRecovery(ctx, pool)
	if err != nil || r == nil {
		return ""
	}
	return fmt.Sprintf("restored from %s: nothing unattended runs until `buddi resume` (see `buddi recovery`)", r.Archive)
}

// dailyBackup is the scheduled backup's queue part: an hourly check that writes a backup into
// <home>/backups when the newest is a day old and the owner has not switched it off (buddi
// backup schedule off). It is a River job rather than a mission because missions run agents.
func dailyBackup(cfg config.Config, src *dbsource.Source, log *slog.Logger) backup.Daily {
	agentsDir, skillsDir := agents.OwnerDirs(cfg.Home, os.Getenv)
	return backup.Daily{Pool: src.Pool, OwnerDSN: src.OwnerDSN, BinDir: cfg.PGBinDir,
		Files: backup.Files{Home: cfg.Home, AgentsDir: agentsDir, SkillsDir: skillsDir}, Log: log}
}
