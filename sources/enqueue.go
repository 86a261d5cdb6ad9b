package sources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"buddi/plugins"
)

// errEnqueued rolls back a start whose dedup key another start took first.
var errEnqueued = errors.New("sources: enqueued already")

// ErrNoStarter is what EnqueueRun returns when the engine has no Starter.
var ErrNoStarter = errors.New("sources: this buddi starts no runs for sources")

// enqueuer is the EnqueueRun a poll of s (ledger row run) is handed: it starts a run once per
// dedup key, ever. The run and its dedup row are written in one transaction; a key that is
// there already starts nothing and is no error, so a poll that enqueued, then crashed before
// its own commit, polls again and enqueues again without a second run.
func (e *Engine) enqueuer(s plugins.Source, run int64, started *atomic.Int64) plugins.EnqueueRun {
	return func(ctx context.Context, agentID, prompt, dedupKey string) error {
		switch {
		case strings.TrimSpace(dedupKey) == "":
			return fmt.Errorf("source %s: a run needs a dedup key", s.ID)
		case strings.TrimSpace(agentID) == "":
			return fmt.Errorf("source %s: a run needs an agent", s.ID)
		case strings.TrimSpace(prompt) == "":
			return fmt.Errorf("source %s: a run needs a prompt", s.ID)
		case e.Start == nil:
			return ErrNoStarter
		}
		var known bool
		if err := e.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM core.source_enqueues WHERE source = $1 AND dedup_key = $2)`,
			s.ID, dedupKey).Scan(&known); err != nil {
			return fmt.Errorf("source %s: look up dedup key: %w", s.ID, err)
		}
		if known {
			return nil
		}
		_, err := e.Start(ctx, s.ID, agentID, prompt, func(ctx context.Context, tx pgx.Tx, runID string) error {
			tag, err := tx.Exec(ctx, `INSERT INTO core.source_enqueues (source, dedup_key, agent, run_id, source_run) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (source, dedup_key) DO NOTHING`, s.ID, dedupKey, agentID, runID, run)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return errEnqueued
			}
			return nil
		})
		switch {
		case errors.Is(err, errEnqueued):
			return nil
		case err != nil:
			return fmt.Errorf("source %s: start a run of %s: %w", s.ID, agentID, err)
		}
		started.Add(1)
		return nil
	}
}
