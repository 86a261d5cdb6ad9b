package scheduler

import (
	"context"
	"fmt"
)

// StillUseful reports whether m has raised "Still useful?" and waits for the owner's Keep or
// Stop: it is switched on and has been silent StillUsefulAfter runs in a row or more.
func (m Mission) StillUseful() bool { return m.Enabled && m.QuietRuns >= StillUsefulAfter }

// Keep is the owner's answer "keep it" to "Still useful?": the silent runs are counted from
// zero again, so the question comes back only after as many more.
func (s *Store) Keep(ctx context.Context, id int64) error {
	tag, err := s.Pool.Exec(ctx, `UPDATE core.missions SET quiet_runs = 0 WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("keep mission %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("mission %d: %w", id, ErrNotFound)
	}
	return nil
}
