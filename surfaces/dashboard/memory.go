package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// Memory serves the Memory page: what each agent keeps (the memory plugin's notes and the
// owner's preferences), where each note came from, and the owner's corrections and deletions.
// Every text it returns has been scrubbed of stored secrets by the implementation.
type Memory interface {
	// MemoryNotes lists the notes, newest first: agent's, or every agent's when agent is "",
	// expired and deleted ones included, at most limit.
	MemoryNotes(ctx context.Context, agent string, limit int) ([]MemoryNote, error)
	// MemoryPreferences lists every revision of every preference, by key, newest revision
	// first.
	MemoryPreferences(ctx context.Context) ([]MemoryPreference, error)
	// CorrectPreference writes a new revision of key, authored by the owner, superseding the
	// current one. refusal is a sentence for the owner when the statement cannot be kept.
	CorrectPreference(ctx context.Context, key, value string) (p MemoryPreference, refusal string, err error)
	// DeleteNote marks note id deleted by the owner; the row stays for the audit. refusal is
	// a sentence for the owner when there is no such note or it was deleted already.
	DeleteNote(ctx context.Context, id int64) (n MemoryNote, refusal string, err error)
}

// MemoryNote is one note with its provenance.
type MemoryNote struct {
	ID             int64      `json:"id"`                        // the note's id
	Agent          string     `json:"agent"`                     // the agent that wrote it
	Text           string     `json:"text"`                      // what it says
	Scope          string     `json:"scope"`                     // private or shared
	ConversationID string     `json:"conversation_id,omitempty"` // the conversation it was written in
	RunID          string     `json:"run_id,omitempty"`          // the run that wrote it
	CreatedAt      time.Time  `json:"created_at"`                // when it was written
	ExpiresAt      *time.Time `json:"expires_at,omitempty"`      // when it lapses
	DeletedAt      *time.Time `json:"deleted_at,omitempty"`      // when it was deleted
	DeletedBy      string     `json:"deleted_by,omitempty"`      // "owner" or the agent
}

// MemoryPreference is one revision of a preference.
type MemoryPreference struct {
	ID             int64      `json:"id"`                        // the revision's id
	Key            string     `json:"key"`                       // what it is about
	Value          string     `json:"value"`                     // what the owner prefers
	Revision       int        `json:"revision"`                  // 1, then one more per correction
	Author         string     `json:"author"`                    // "owner" or the agent that proposed it
	ConversationID string     `json:"conversation_id,omitempty"` // where an agent proposed it
	CreatedAt      time.Time  `json:"created_at"`                // when this revision was written
	SupersededAt   *time.Time `json:"superseded_at,omitempty"`   // when the next revision was written
}

// memoryNotesShown is how many notes the page lists.
const memoryNotesShown = 500

// memoryRoutes registers the Memory page's routes when Deps.Memory is set.
func (s *Server) memoryRoutes() {
	if s.deps.Memory == nil {
		return
	}
	s.handle("GET /api/memory", s.getMemory)
	s.write("POST /api/memory/preferences", s.correctPreference)
	s.write("POST /api/memory/notes/{id}/delete", s.deleteNote)
}

// memoryNoteJSON is a note as the page shows it.
type memoryNoteJSON struct {
	MemoryNote
	AgentHandle string `json:"agent_handle,omitempty"` // the agent's @handle, when it still exists
	State       string `json:"state"`                  // kept, expired or deleted
}

// preferenceJSON is a preference with its revisions, the current one first.
type preferenceJSON struct {
	Key       string             `json:"key"`       // what it is about
	Current   MemoryPreference   `json:"current"`   // the revision in force
	Revisions []MemoryPreference `json:"revisions"` // every revision, newest first
}

// getMemory lists the notes (one agent's with ?agent=) and the preferences with their
// revisions.
func (s *Server) getMemory(w http.ResponseWriter, r *http.Request) {
	agent := r.URL.Query().Get("agent")
	notes, err := s.deps.Memory.MemoryNotes(r.Context(), agent, memoryNotesShown)
	if err != nil {
		s.failed(w, r, "the memory's notes could not be read", err)
		return
	}
	prefs, err := s.deps.Memory.MemoryPreferences(r.Context())
	if err != nil {
		s.failed(w, r, "the preferences could not be read", err)
		return
	}
	handles, now := s.handles(), time.Now()
	outNotes := []memoryNoteJSON{}
	for _, n := range notes {
		state := "kept"
		switch {
		case n.DeletedAt != nil:
			state = "deleted"
		case n.ExpiresAt != nil && !n.ExpiresAt.After(now):
			state = "expired"
		}
		outNotes = append(outNotes, memoryNoteJSON{MemoryNote: n, AgentHandle: handles[n.Agent], State: state})
	}
	outPrefs := []preferenceJSON{}
	for _, p := range prefs {
		if len(outPrefs) == 0 || outPrefs[len(outPrefs)-1].Key != p.Key {
			outPrefs = append(outPrefs, preferenceJSON{Key: p.Key})
		}
		last := &outPrefs[len(outPrefs)-1]
		last.Revisions = append(last.Revisions, p)
		if p.SupersededAt == nil {
			last.Current = p
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"agent": agent, "notes": outNotes, "preferences": outPrefs, "handles": handles})
}

// correctPreference writes the owner's revision of a preference.
func (s *Server) correctPreference(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	p, refusal, err := s.deps.Memory.CorrectPreference(r.Context(), body.Key, body.Value)
	switch {
	case err != nil:
		s.failed(w, r, "the preference could not be kept", err)
	case refusal != "":
		writeError(w, http.StatusBadRequest, refusal)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"preference": p,
			"sentence": fmt.Sprintf("Kept revision %d of %q; the earlier ones stay listed.", p.Revision, p.Key)})
	}
}

// deleteNote marks a note deleted by the owner.
func (s *Server) deleteNote(w http.ResponseWriter, r *http.Request) {
	id, ok := pathNumber(w, r, "note")
	if !ok {
		return
	}
	n, refusal, err := s.deps.Memory.DeleteNote(r.Context(), id)
	switch {
	case err != nil:
		s.failed(w, r, fmt.Sprintf("note %d could not be deleted", id), err)
	case refusal != "":
		writeError(w, http.StatusNotFound, refusal)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"note": n,
			"sentence": fmt.Sprintf("Deleted note %d: no agent recalls it again, and it stays listed here as deleted.", id)})
	}
}
