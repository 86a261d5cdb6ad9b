package dashboard

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"riverqueue.com/riverui"
)

// QueueUIPrefix is where River's own UI is served on the dashboard.
const QueueUIPrefix = "/river"

// QueueUI is River's own UI (riverui) over client, served under QueueUIPrefix: the queue's
// jobs, their arguments and errors, and its queues, with cancel, retry, delete and pause. Its
// background counters are not started: each page asks the database itself, so an idle buddi
// makes no more queries.
func QueueUI(client *river.Client[pgx.Tx], log *slog.Logger) (http.Handler, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(client, nil),
		Logger:    log.With("service", "queue-ui"),
		Prefix:    QueueUIPrefix,
	})
	if err != nil {
		return nil, fmt.Errorf("build the queue's UI: %w", err)
	}
	return h, nil
}

// queueUICSP allows River's page its own scripts, styles, images and API, and nothing else.
const queueUICSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// queueUIRoutes mounts Deps.QueueUI under QueueUIPrefix, behind the gate like every route.
// Its writes come from River's page, which sends neither a CSRF token nor always JSON: they
// must carry this server's own origin (a browser sets Origin on every write, and a page on
// another site, or on another port of this host, cannot send this one), or the command
// line's token.
func (s *Server) queueUIRoutes() {
	if s.deps.QueueUI == nil {
		return
	}
	ui := s.deps.QueueUI
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		// River's page shows job arguments and errors, which agents can shape: it runs on the
		// dashboard's origin, so only its own scripts may run there.
		h.Set("Content-Security-Policy", queueUICSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !byBearer(r) && !ownOrigin(r) {
			writeError(w, http.StatusForbidden, "this request did not come from buddi's own page and is refused")
			return
		}
		ui.ServeHTTP(w, r)
	})
	// One pattern a method: "GET /" already holds every other path's GET.
	for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		pattern := method + " " + QueueUIPrefix + "/"
		s.routes = append(s.routes, pattern)
		s.mux.Handle(pattern, h)
	}
}

// ownOrigin reports whether r was sent by a page of this server's own origin.
func ownOrigin(r *http.Request) bool {
	u, err := url.Parse(r.Header.Get("Origin"))
	if r.Header.Get("Origin") == "" || err != nil || u.Host != r.Host || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}
