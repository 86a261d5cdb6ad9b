package app

import (
	"context"
	"errors"
	"time"

	"buddi/core/redact"
	"buddi/internal/readable"
	"buddi/plugins/memory"
	"buddi/surfaces/dashboard"
)

// memoryPage serves the dashboard's Memory page from the memory plugin's store, every text
// scrubbed of stored secrets on its way out (seed 004's redaction rule), and a note's text and
// a preference's value with each character no reader could see shown as a mark, so the owner
// reads all that later runs will.
type memoryPage struct {
	store *memory.Store
	scrub *redact.Live // nil scrubs nothing (no vault)
	now   func() time.Time
}

var _ dashboard.Memory = memoryPage{}

func (m memoryPage) clean(s string) string {
	if m.scrub == nil {
		return s
	}
	return m.scrub.String(s)
}

func (m memoryPage) clock() time.Time {
	if m.now == nil {
		return time.Now()
	}
	return m.now()
}

func (m memoryPage) note(n memory.Note) dashboard.MemoryNote {
	return dashboard.MemoryNote{ID: n.ID, Agent: n.Agent, Text: readable.Reveal(m.clean(n.Text)), Scope: n.Scope, ConversationID: n.ConversationID,
		RunID: n.RunID, CreatedAt: n.CreatedAt, ExpiresAt: n.ExpiresAt, DeletedAt: n.DeletedAt, DeletedBy: n.DeletedBy}
}

func (m memoryPage) preference(p memory.Preference) dashboard.MemoryPreference {
	return dashboard.MemoryPreference{ID: p.ID, Key: m.clean(p.Key), Value: readable.Reveal(m.clean(p.Value)), Revision: p.Revision, Author: p.Author,
		ConversationID: p.ConversationID, CreatedAt: p.CreatedAt, SupersededAt: p.SupersededAt}
}

func (m memoryPage) MemoryNotes(ctx context.Context, agent string, limit int) ([]dashboard.MemoryNote, error) {
	notes, err := m.store.Notes(ctx, agent, limit)
	if err != nil {
		return nil, err
	}
	out := make([]dashboard.MemoryNote, 0, len(notes))
	for _, n := range notes {
		out = append(out, m.note(n))
	}
	return out, nil
}

func (m memoryPage) MemoryPreferences(ctx context.Context) ([]dashboard.MemoryPreference, error) {
	prefs, err := m.store.History(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]dashboard.MemoryPreference, 0, len(prefs))
	for _, p := range prefs {
		out = append(out, m.preference(p))
	}
	return out, nil
}

func (m memoryPage) CorrectPreference(ctx context.Context, key, value string) (dashboard.MemoryPreference, string, error) {
	p, _, err := m.store.Prefer(ctx, memory.NewPreference{Key: key, Value: value, Author: memory.Owner, At: m.clock()})
	if memory.Invalid(err) {
		return dashboard.MemoryPreference{}, err.Error(), nil
	}
	if err != nil {
		return dashboard.MemoryPreference{}, "", err
	}
	return m.preference(p), "", nil
}

func (m memoryPage) DeleteNote(ctx context.Context, id int64) (dashboard.MemoryNote, string, error) {
	n, err := m.store.Forget(ctx, id, "", memory.Owner, m.clock())
	switch {
	case errors.Is(err, memory.ErrNoNote):
		return dashboard.MemoryNote{}, "there is no such note: the Memory page lists every note with its id", nil
	case errors.Is(err, memory.ErrForgotten):
		return dashboard.MemoryNote{}, "that note was deleted already; it stays listed as deleted", nil
	case err != nil:
		return dashboard.MemoryNote{}, "", err
	}
	return m.note(n), "", nil
}
