package app

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/redact"
	"buddi/plugins/web"
	"buddi/runtime/provider"
	"buddi/runtime/run"
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

// nativeSearch is where an agent granted web.search searches: with its provider's own
// search (on a wire that offers it) unless the owner configured a search backend
// (BUDDI_SEARCH_PROVIDER), which then serves every agent through web.search. Each native
// search gets its web.fetches row, as web.search's do.
type nativeSearch struct {
	store      web.Store
	configured bool             // BUDDI_SEARCH_PROVIDER is set
	now        func() time.Time // nil is time.Now
}

var _ run.NativeSearch = nativeSearch{}

// nativeSearchHost is the host a native search is recorded against: the provider's.
const nativeSearchHost = "api.anthropic.com"

// Native reports whether agents search natively: only when the owner chose no backend.
func (n nativeSearch) Native() bool { return !n.configured }

// Record writes the search's web.fetches row: the query as its purpose (the model gave no
// other), its outcome, and the provider's error code as the reason of one that failed.
func (n nativeSearch) Record(ctx context.Context, agent, conv, runID string, s provider.Search) error {
	at := time.Now()
	if n.now != nil {
		at = n.now()
	}
	f := web.Fetch{Host: nativeSearchHost, Outcome: web.OutcomeOK}
	if s.Error != "" {
		f.Outcome, f.Reason = web.OutcomeError, "The provider's search failed: "+s.Error+"."
	}
	return n.store.Add(ctx, web.Record{Agent: agent, At: at, Tool: "web.search", Purpose: "native search: " + s.Query,
		ConversationID: conv, RunID: runID, Fetch: f})
}
