package dashboard

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// WebFetch is one row of the web plugin's audit log as the dashboard shows it: who asked,
// when, why, which host and what came of it. It never holds a page's body.
type WebFetch struct {
	Agent          string    `json:"agent"`           // the agent, or "owner" for the terminal's reads
	At             time.Time `json:"at"`              // when the fetch began
	Tool           string    `json:"tool"`            // web.read or web.search
	Purpose        string    `json:"purpose"`         // why, in the caller's words
	Host           string    `json:"host"`            // the host asked for
	Outcome        string    `json:"outcome"`         // ok, blocked, error, too_large, not_text
	Reason         string    `json:"reason"`          // why, for an outcome other than ok
	Status         int       `json:"status"`          // the last HTTP status, 0 when none came
	Bytes          int64     `json:"bytes"`           // the body bytes read
	ConversationID string    `json:"conversation_id"` // the call's conversation, if any
	RunID          string    `json:"run_id"`          // the call's run, if any
}

// WebFetches reads the web plugin's audit log (web.fetches).
type WebFetches interface {
	// Recent returns the last n rows for agent (every agent when agent is ""), newest first.
	Recent(ctx context.Context, agent string, n int) ([]WebFetch, error)
}

// webRoutes serves the audit log of what agents fetched from the web, when the web plugin
// is compiled in.
func (s *Server) webRoutes() {
	if s.deps.WebFetches == nil {
		return
	}
	s.handle("GET /api/web/fetches", s.webFetches)
}

// webFetches answers GET /api/web/fetches?agent=&limit= (default 50, at most 200).
func (s *Server) webFetches(w http.ResponseWriter, r *http.Request) {
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 200 {
			writeError(w, http.StatusBadRequest, "limit must be a whole number from 1 to 200")
			return
		}
		limit = n
	}
	rows, err := s.deps.WebFetches.Recent(r.Context(), r.URL.Query().Get("agent"), limit)
	if err != nil {
		s.failed(w, r, "read web.fetches", err)
		return
	}
	if rows == nil {
		rows = []WebFetch{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"fetches": rows})
}
