package scheduler

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// RecapName is the weekly recap's name: the default mission the recap role's holder runs,
// into which the digest of info findings is folded.
const RecapName = "Weekly recap"

// AddDefaults adds the missions buddi ships when they are missing: the weekly recap for
// agent (the recap role's holder), Mondays at 09:00 in tz. It returns the missions added.
func (s *Store) AddDefaults(ctx context.Context, agent, tz string) ([]Mission, error) {
	var exists bool
	if err := s.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM core.missions WHERE source = 'default' AND name = $1)`, RecapName).Scan(&exists); err != nil {
		return nil, err
	}
	if exists {
		return nil, nil
	}
	m, err := s.Add(ctx, Mission{Name: RecapName, Agent: agent, Cron: "0 9 * * 1", Timezone: tz, Misfire: Coalesce, Source: "default",
		Prompt: "Give the owner the week's recap: what happened, what is still open, and what the watchers noticed (below). " +
			"Lead with what needs them. Report it with mission.report; stay silent only when there is truly nothing."})
	if err != nil {
		return nil, err
	}
	return []Mission{m}, nil
}

// Digest returns the text of the pending digest items for a recap run, and the last item's
// id, which the occurrence keeps: only a delivered recap consumes them.
func Digest(ctx context.Context, q interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}) (string, int64, error) {
	rows, err := q.Query(ctx, `SELECT id, owner_line FROM core.digest_items WHERE consumed_at IS NULL ORDER BY id`)
	if err != nil {
		return "", 0, err
	}
	defer rows.Close()
	var b strings.Builder
	var upto int64
	for rows.Next() {
		var id int64
		var line string
		if err := rows.Scan(&id, &line); err != nil {
			return "", 0, err
		}
		fmt.Fprintf(&b, "- %s\n", line)
		upto = id
	}
	return b.String(), upto, rows.Err()
}
