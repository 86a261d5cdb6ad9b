package scheduler

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Run is an occurrence as the owner reads it: what ran when, its state, and the first line
// of the report its run made, if it made one.
type Run struct {
	Occurrence
	Report string `json:"report,omitempty"` // the report's first line; "" when the run reported nothing
}

// Runs lists mission id's occurrences, newest first (at most limit; 0 is 100), each with the
// first line of its run's report.
func (s *Store) Runs(ctx context.Context, id int64, limit int) ([]Run, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.Pool.Query(ctx, `SELECT o.id, o.mission_id, o.instant, o.state, o.reason, o.covers, o.run_id, coalesce(r.report, '')
		FROM core.occurrences o
		LEFT JOIN LATERAL (SELECT e.payload->>'report' AS report FROM core.events e
			WHERE e.kind = 'mission.reported' AND o.run_id <> '' AND e.payload->>'run_id' = o.run_id
			ORDER BY e.id DESC LIMIT 1) r ON true
		WHERE o.mission_id = $1 ORDER BY o.instant DESC, o.id DESC LIMIT $2`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("list the runs of mission %d: %w", id, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Run, error) {
		var o Run
		err := r.Scan(&o.ID, &o.MissionID, &o.Instant, &o.State, &o.Reason, &o.Covers, &o.RunID, &o.Report)
		o.Report = firstLine(o.Report)
		return o, err
	})
}

// firstLine is s's first line that is not blank, trimmed.
func firstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}
