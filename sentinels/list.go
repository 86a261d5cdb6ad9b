package sentinels

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/plugins"
)

// Status is a sentinel as the owner sees it.
type Status struct {
	ID          string     `json:"id"`                   // the sentinel
	Description string     `json:"description"`          // what it watches
	Enabled     bool       `json:"enabled"`              // the owner's switch
	LastRun     *time.Time `json:"last_run,omitempty"`   // when it last ticked
	LastError   string     `json:"last_error,omitempty"` // how its last tick failed
	Findings    int        `json:"open_findings"`        // findings not resolved
}

// Finding is a recorded finding as the owner sees it.
type Finding struct {
	Sentinel  string     `json:"sentinel"`                // whose
	Key       string     `json:"key"`                     // its key
	Severity  string     `json:"severity"`                // urgent or info
	OwnerLine string     `json:"owner_line"`              // what the owner reads
	Kind      string     `json:"kind,omitempty"`          // its kind
	Subject   string     `json:"subject,omitempty"`       // its subject
	LastSeen  time.Time  `json:"last_seen"`               // when last returned
	Snoozed   *time.Time `json:"snoozed_until,omitempty"` // "Not now" until
	NotNeeded bool       `json:"not_needed,omitempty"`    // "Not needed"
}

// Statuses reports on each of list.
func (e *Engine) Statuses(ctx context.Context, list []plugins.Sentinel) ([]Status, error) {
	out := make([]Status, 0, len(list))
	for _, s := range list {
		st := Status{ID: s.ID, Description: s.Description, Enabled: true}
		if err := e.Pool.QueryRow(ctx, `SELECT enabled FROM core.sentinel_switches WHERE sentinel = $1`, s.ID).Scan(&st.Enabled); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return nil, err
		}
		var at time.Time
		err := e.Pool.QueryRow(ctx, `SELECT started_at, error FROM core.sentinel_runs WHERE sentinel = $1 ORDER BY started_at DESC LIMIT 1`, s.ID).Scan(&at, &st.LastError)
		if err == nil {
			st.LastRun = &at
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return nil, err
		}
		if err := e.Pool.QueryRow(ctx, `SELECT count(*) FROM core.sentinel_findings WHERE sentinel = $1 AND resolved_at IS NULL`, s.ID).Scan(&st.Findings); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// OpenFindings lists the findings not resolved, urgent first.
func (e *Engine) OpenFindings(ctx context.Context) ([]Finding, error) {
	rows, err := e.Pool.Query(ctx, `SELECT sentinel, key, severity, owner_line, kind, subject, last_seen, snoozed_until, not_needed
		FROM core.sentinel_findings WHERE resolved_at IS NULL ORDER BY severity DESC, last_seen DESC LIMIT 500`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Finding, error) {
		var f Finding
		err := r.Scan(&f.Sentinel, &f.Key, &f.Severity, &f.OwnerLine, &f.Kind, &f.Subject, &f.LastSeen, &f.Snoozed, &f.NotNeeded)
		return f, err
	})
}
