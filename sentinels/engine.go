// Package sentinels runs the plugins' sentinels (seed 004, "Sentinels"): deterministic
// watchers that look at their own plugin's data and return findings, with no model. Whether a
// finding interrupts the owner is decided here, never by the plugin: urgent ones wake an agent
// (the Wake function), info ones go to the weekly digest (core.digest_items), each only when it
// is new, came back after resolving, outlived its cooldown (24 hours urgent, 7 days info) or
// escalated from info to urgent; snoozed and muted findings are recorded but never speak. A key
// the sentinel stops returning is resolved. A sentinel that fails records its error and its
// findings are ignored: a partial list is not evidence that anything resolved.
//
// The period is a ledger (core.sentinel_runs), not a timer: a machine that slept finds every
// sentinel due at once.
package sentinels

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/plugins"
)

// Cooldowns.
const (
	UrgentCooldown = 24 * time.Hour
	InfoCooldown   = 7 * 24 * time.Hour
)

// Wake hands urgent findings to the agent that speaks for sentinels (the overview holder).
type Wake func(ctx context.Context, sentinel string, findings []plugins.Finding) error

// Engine evaluates sentinels against the database.
type Engine struct {
	Pool *pgxpool.Pool // the ledger, findings, switches, mutes and digest
	Wake Wake          // hears urgent findings that speak (when Start is nil); nil drops them
	// Start starts a wake's run and returns its id, recorded with the wake so mutes are
	// honoured again before it delivers; it takes precedence over Wake.
	Start Starter
	Now   func() time.Time // the clock; nil is time.Now
}

func (e *Engine) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

// Due reports whether sentinel s is due by its ledger (and switched on), and when it is
// next due.
func (e *Engine) Due(ctx context.Context, s plugins.Sentinel) (bool, time.Time, error) {
	now := e.now()
	// One look: the owner's switch, buddi pause (nothing is due until buddi resume), and the
	// ledger's last start.
	var on, paused bool
	var last *time.Time
	err := e.Pool.QueryRow(ctx, `SELECT
		COALESCE((SELECT enabled FROM core.sentinel_switches WHERE sentinel = $1), true),
		EXISTS (SELECT 1 FROM core.system_flags WHERE key = 'paused'),
		(SELECT max(started_at) FROM core.sentinel_runs WHERE sentinel = $1)`, s.ID).Scan(&on, &paused, &last)
	if err != nil {
		return false, time.Time{}, err
	}
	if !on || paused {
		return false, now.Add(Loop), nil
	}
	if last == nil {
		return true, now, nil
	}
	next := last.Add(s.Period)
	return !now.Before(next), next, nil
}

// Tick runs s once: the ledger row first, then the check, then the decisions. A check that
// panics is recorded as failed and the panic goes on (to the sentinel's actor, whose
// supervisor restarts it); its findings, if any, are never seen.
func (e *Engine) Tick(ctx context.Context, s plugins.Sentinel) (spoke int, err error) {
	now := e.now()
	var runID int64
	if err := e.Pool.QueryRow(ctx, `INSERT INTO core.sentinel_runs (sentinel, started_at) VALUES ($1, $2) RETURNING id`, s.ID, now).Scan(&runID); err != nil {
		return 0, fmt.Errorf("sentinel %s: record the run: %w", s.ID, err)
	}
	fail := func(msg string) {
		wctx := context.WithoutCancel(ctx)
		_, _ = e.Pool.Exec(wctx, `UPDATE core.sentinel_runs SET finished_at = now(), error = $2 WHERE id = $1`, runID, msg)
		_, _ = eventlog.Append(wctx, e.Pool, events.SentinelFailed, "", events.SentinelFailedPayload{Sentinel: s.ID, Error: msg})
	}
	var findings []plugins.Finding
	func() {
		defer func() {
			if r := recover(); r != nil {
				fail(fmt.Sprintf("panic: %v", r))
				panic(r)
			}
		}()
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		findings, err = s.Check(cctx)
	}()
	if err != nil {
		fail(err.Error())
		return 0, fmt.Errorf("sentinel %s: %w", s.ID, err)
	}
	var urgent []plugins.Finding
	err = pgx.BeginFunc(ctx, e.Pool, func(tx pgx.Tx) error {
		seen := map[string]bool{}
		for _, f := range findings {
			if f.Key == "" || seen[f.Key] {
				continue
			}
			seen[f.Key] = true
			if f.Severity != "urgent" {
				f.Severity = "info"
			}
			speak, err := e.record(ctx, tx, s.ID, f, now)
			if err != nil {
				return err
			}
			if !speak {
				continue
			}
			spoke++
			if f.Severity == "urgent" {
				urgent = append(urgent, f)
				continue
			}
			if _, err := tx.Exec(ctx, `INSERT INTO core.digest_items (sentinel, key, owner_line) VALUES ($1, $2, $3)
				ON CONFLICT (sentinel, key) WHERE consumed_at IS NULL DO UPDATE SET owner_line = $3`, s.ID, f.Key, f.OwnerLine); err != nil {
				return err
			}
		}
		if len(urgent) > 0 {
			if err := e.queue(ctx, tx, s, urgent); err != nil {
				return err
			}
		}
		// What it no longer returns has resolved: its cooldown clears.
		keys := make([]string, 0, len(seen))
		for k := range seen {
			keys = append(keys, k)
		}
		if _, err := tx.Exec(ctx, `UPDATE core.sentinel_findings SET resolved_at = $3, fired_at = NULL, fired_severity = '', not_needed = false
			WHERE sentinel = $1 AND resolved_at IS NULL AND NOT (key = ANY($2))`, s.ID, keys, now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE core.sentinel_runs SET finished_at = now(), findings = $2 WHERE id = $1`, runID, len(findings))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sentinel %s: %w", s.ID, err)
	}
	if len(urgent) > 0 {
		// Wakes due now start now; a failure leaves them waiting for the next flush.
		if _, err := e.FlushWakes(ctx); err != nil {
			return spoke, fmt.Errorf("sentinel %s: wake: %w", s.ID, err)
		}
	}
	return spoke, nil
}

// record upserts finding f and says whether it speaks now.
func (e *Engine) record(ctx context.Context, tx pgx.Tx, sentinel string, f plugins.Finding, now time.Time) (bool, error) {
	var (
		resolved, fired, snoozed *time.Time
		firedSeverity            string
		notNeeded, exists        bool
	)
	err := tx.QueryRow(ctx, `SELECT resolved_at, fired_at, fired_severity, snoozed_until, not_needed FROM core.sentinel_findings
		WHERE sentinel = $1 AND key = $2 FOR UPDATE`, sentinel, f.Key).Scan(&resolved, &fired, &firedSeverity, &snoozed, &notNeeded)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return false, err
	default:
		exists = true
	}
	if !exists {
		if _, err := tx.Exec(ctx, `INSERT INTO core.sentinel_findings (sentinel, key, severity, owner_line, brief, kind, subject, first_seen, last_seen)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`, sentinel, f.Key, f.Severity, f.OwnerLine, f.Brief, f.Kind, f.Subject, now); err != nil {
			return false, err
		}
	} else if _, err := tx.Exec(ctx, `UPDATE core.sentinel_findings SET severity = $3, owner_line = $4, brief = $5, kind = $6, subject = $7,
			last_seen = $8, resolved_at = NULL WHERE sentinel = $1 AND key = $2`, sentinel, f.Key, f.Severity, f.OwnerLine, f.Brief, f.Kind, f.Subject, now); err != nil {
		return false, err
	}
	// Silenced: snoozed, "not needed", or muted. Recorded, never spoken.
	if (snoozed != nil && now.Before(*snoozed)) || notNeeded {
		return false, nil
	}
	var muted bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM core.sentinel_mutes WHERE kind = $1 AND (subject = '' OR subject = $2))`,
		f.Kind, f.Subject).Scan(&muted); err != nil {
		return false, err
	}
	if muted && f.Kind != "" {
		return false, nil
	}
	cooldown := InfoCooldown
	if f.Severity == "urgent" {
		cooldown = UrgentCooldown
	}
	speak := !exists || resolved != nil || fired == nil || !now.Before(fired.Add(cooldown)) ||
		(f.Severity == "urgent" && firedSeverity == "info")
	if !speak {
		return false, nil
	}
	if _, err := tx.Exec(ctx, `UPDATE core.sentinel_findings SET fired_at = $3, fired_severity = $4 WHERE sentinel = $1 AND key = $2`,
		sentinel, f.Key, now, f.Severity); err != nil {
		return false, err
	}
	_, err = eventlog.Append(ctx, tx, events.SentinelFinding, "", events.SentinelFindingPayload{Sentinel: sentinel, Key: f.Key, Severity: f.Severity, OwnerLine: f.OwnerLine})
	return true, err
}

// Snooze silences a finding: for a week ("Not now"), or until the fact changes ("Not
// needed": until the sentinel stops returning it).
func (e *Engine) Snooze(ctx context.Context, sentinel, key string, notNeeded bool) error {
	q := `UPDATE core.sentinel_findings SET snoozed_until = $3 WHERE sentinel = $1 AND key = $2`
	arg := any(e.now().Add(7 * 24 * time.Hour))
	if notNeeded {
		q, arg = `UPDATE core.sentinel_findings SET not_needed = $3 WHERE sentinel = $1 AND key = $2`, true
	}
	tag, err := e.Pool.Exec(ctx, q, sentinel, key, arg)
	if err == nil && tag.RowsAffected() == 0 {
		err = fmt.Errorf("no finding %s of %s", key, sentinel)
	}
	return err
}

// Mute stops a kind of finding (or one subject of it) from ever speaking.
func (e *Engine) Mute(ctx context.Context, kind, subject string) error {
	_, err := e.Pool.Exec(ctx, `INSERT INTO core.sentinel_mutes (kind, subject) VALUES ($1, $2) ON CONFLICT DO NOTHING`, kind, subject)
	return err
}

// Switch turns a sentinel on or off.
func (e *Engine) Switch(ctx context.Context, sentinel string, on bool) error {
	_, err := e.Pool.Exec(ctx, `INSERT INTO core.sentinel_switches (sentinel, enabled) VALUES ($1, $2)
		ON CONFLICT (sentinel) DO UPDATE SET enabled = $2, updated_at = now()`, sentinel, on)
	return err
}
