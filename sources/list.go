package sources

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/plugins"
	"buddi/queue"
)

// Entry is a source and the plugin that contributes it.
type Entry struct {
	Plugin string         // the plugin's name
	Source plugins.Source // the source
}

// Of returns the sources of manifests, in order, refusing a source without an id, a period
// or a poll, and two with one id (each is one actor, named by its id).
func Of(manifests []plugins.Manifest) ([]Entry, error) {
	var out []Entry
	seen := map[string]string{}
	for _, m := range manifests {
		for _, s := range m.Sources {
			switch {
			case s.ID == "":
				return nil, fmt.Errorf("plugin %s: a source has no id", m.Name)
			case s.Period <= 0:
				return nil, fmt.Errorf("plugin %s: source %s has no period", m.Name, s.ID)
			case s.Poll == nil:
				return nil, fmt.Errorf("plugin %s: source %s has no poll", m.Name, s.ID)
			case seen[s.ID] != "":
				return nil, fmt.Errorf("plugin %s: source %s is plugin %s's already", m.Name, s.ID, seen[s.ID])
			}
			seen[s.ID] = m.Name
			out = append(out, Entry{Plugin: m.Name, Source: s})
		}
	}
	return out, nil
}

// Sources are the sources of entries.
func Sources(entries []Entry) []plugins.Source {
	out := make([]plugins.Source, len(entries))
	for i, en := range entries {
		out[i] = en.Source
	}
	return out
}

// Status is a source as the owner sees it.
type Status struct {
	ID          string     `json:"id"`                   // the source
	Plugin      string     `json:"plugin"`               // the plugin it comes from
	Description string     `json:"description"`          // what it polls
	Period      string     `json:"period"`               // how often it is due (a Go duration)
	LastRun     *time.Time `json:"last_run,omitempty"`   // when it last polled
	State       string     `json:"state"`                // its last poll's: ok, failed, running, or never
	LastError   string     `json:"last_error,omitempty"` // how its last poll failed
	Failures    int        `json:"failures,omitempty"`   // failed polls in a row
	Enqueued    int        `json:"runs_started"`         // runs it started, ever
	NextDue     time.Time  `json:"next_due"`             // when it is next due
	Paused      bool       `json:"paused,omitempty"`     // buddi pause: nothing polls
}

// Statuses reports on each of entries.
func (e *Engine) Statuses(ctx context.Context, entries []Entry) ([]Status, error) {
	paused, _, err := queue.Paused(ctx, e.Pool)
	if err != nil {
		return nil, err
	}
	out := make([]Status, 0, len(entries))
	for _, en := range entries {
		s := en.Source
		st := Status{ID: s.ID, Plugin: en.Plugin, Description: s.Description, Period: s.Period.String(), State: "never"}
		var at time.Time
		err := e.Pool.QueryRow(ctx, `SELECT started_at, state, error FROM core.source_runs WHERE source = $1 ORDER BY id DESC LIMIT 1`,
			s.ID).Scan(&at, &st.State, &st.LastError)
		switch {
		case err == nil:
			st.LastRun = &at
		case !errors.Is(err, pgx.ErrNoRows):
			return nil, fmt.Errorf("source %s: read its last poll: %w", s.ID, err)
		}
		l, err := e.ledger(ctx, e.Pool, s.ID)
		if err != nil {
			return nil, err
		}
		st.Failures = l.failures
		if err := e.Pool.QueryRow(ctx, `SELECT count(*) FROM core.source_enqueues WHERE source = $1`, s.ID).Scan(&st.Enqueued); err != nil {
			return nil, fmt.Errorf("source %s: count its runs: %w", s.ID, err)
		}
		st.NextDue, st.Paused = e.next(s, l, e.now()), paused
		out = append(out, st)
	}
	return out, nil
}
