package app

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/redact"
	"buddi/plugins/web"
	"buddi/surfaces/dashboard"
)

// webFetches serves Activity's list of what agents fetched from the web, from web.fetches,
// the purposes and reasons scrubbed of stored secrets on their way out.
type webFetches struct {
	pool  *pgxpool.Pool
	scrub *redact.Live // nil scrubs nothing (no vault)
}

var _ dashboard.WebFetches = webFetches{}

// Recent returns the last n rows for agent ("" for every agent), newest first.
func (f webFetches) Recent(ctx context.Context, agent string, n int) ([]dashboard.WebFetch, error) {
	rows, err := web.Store{Pool: f.pool}.Recent(ctx, agent, n)
	if err != nil {
		return nil, err
	}
	clean := func(s string) string {
		if f.scrub == nil {
			return s
		}
		return f.scrub.String(s)
	}
	out := make([]dashboard.WebFetch, 0, len(rows))
	for _, r := range rows {
		out = append(out, dashboard.WebFetch{Agent: r.Agent, At: r.At, Tool: r.Tool, Purpose: clean(r.Purpose), Host: r.Host,
			Outcome: r.Outcome, Reason: clean(r.Reason), Status: r.Status, Bytes: r.Bytes, ConversationID: r.ConversationID, RunID: r.RunID})
	}
	return out, nil
}
