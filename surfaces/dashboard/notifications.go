package dashboard

import (
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"

	"buddi/core/notify"
)

// Presence counts the dashboard pages open now; the owner is here while one is.
type Presence struct{ open atomic.Int64 }

// Here reports whether a dashboard page is open now.
func (p *Presence) Here() bool { return p != nil && p.open.Load() > 0 }

// listNotifications is what arrived for the owner (notifyOwner's rows on the dashboard's
// route), newest first: ?limit=N (default 50).
func (s *Server) listNotifications(w http.ResponseWriter, r *http.Request) {
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	rows, err := notify.List(r.Context(), s.deps.Pool, limit)
	if err != nil {
		if slow(w, r, err) {
			return
		}
		s.log.Error("notifications", "err", err)
		writeError(w, http.StatusInternalServerError, "the notifications could not be read: try again")
		return
	}
	// An approval's notice is its card on Home already.
	shown := []notify.Row{}
	for _, row := range rows {
		if row.Kind != notify.KindApproval {
			shown = append(shown, row)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"notifications": shown})
}

// seenNotification records that the owner saw one.
func (s *Server) seenNotification(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		writeError(w, http.StatusBadRequest, "a notification's id is a positive number")
		return
	}
	err = notify.Seen(r.Context(), s.deps.Pool, id)
	if errors.Is(err, notify.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no such notification")
		return
	}
	s.answer(w, r, err, map[string]any{"seen": id})
}
