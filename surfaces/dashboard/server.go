// Package dashboard is the web surface: the HTTP listener on 127.0.0.1:4317 (BUDDI_WEB_PORT)
// and its routes: GET /api/health and the approvals API. It is a thin adapter: deciding goes
// through core's one atomic claim, like every other surface.
package dashboard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/executor"
	"buddi/core/redact"
	"buddi/core/registry"
	"buddi/core/seal"
	"buddi/health"
)

// HealthFunc builds the health report for a request.
type HealthFunc func(ctx context.Context) health.Report

// Listen binds addr. A port already taken gives an error naming the port and the variable
// that changes it.
func Listen(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err == nil {
		return l, nil
	}
	_, port, _ := net.SplitHostPort(addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("port %s on %s is already in use: stop what holds it, or set BUDDI_WEB_PORT to a free port", port, addr)
	}
	return nil, fmt.Errorf("listen on %s: %w (BUDDI_WEB_HOST and BUDDI_WEB_PORT choose the address)", addr, err)
}

// Deps are what the routes read and write through.
type Deps struct {
	// Health builds /api/health.
	Health HealthFunc
	// Pool is the application's database pool.
	Pool *pgxpool.Pool
	// Presence, when set, counts the dashboard pages open now (their live channel): it is how
	// notifyOwner knows whether the owner is here. One Presence serves every listener.
	Presence *Presence
	// Queue enqueues the execution of an approved action, and the resumption of the run that
	// waited on one decided against.
	Queue executor.Queue
	// Tools is the registry, to grant standing permissions for tools that opt in.
	Tools *registry.Registry
	// Addr is the listener's loopback address (host:port): a request's Host must be it, or
	// 127.0.0.1, localhost or [::1] with its port. Empty allows those names on any port.
	Addr string
	// Log receives what the server logs, tagged service=dashboard. Default: discard.
	Log *slog.Logger
	// Chat serves the agents and conversations; nil leaves those routes out.
	Chat *Chat
	// Remote: the listener is off loopback (BUDDI_WEB_HOST). Every request needs a credential
	// either way; the page is told, to say where it is reached from.
	Remote bool
	// Seal is the installation's key: tickets and sessions are stored as its keyed hashes.
	// The zero key accepts no session.
	Seal seal.Key
	// CLIToken is the command line's bearer token (webauth.CLIToken); empty accepts none.
	CLIToken string
	// MetricsToken is the scrape token (webauth.MetricsToken): it opens GET /metrics and
	// nothing else; empty accepts none.
	MetricsToken string
	// Jobs serves the failed jobs; nil leaves those routes out.
	Jobs Jobs
	// Developer serves Settings → Developer; nil leaves those routes out.
	Developer Developer
	// Previews serves the preview link and check routes; nil leaves them out.
	Previews Previews
	// Artifacts serves stored files; nil leaves the route out.
	Artifacts Artifacts
	// Files serves the Files page (core's artifact store); nil leaves those routes out.
	Files Files
	// FilesScrub replaces stored secrets in the text a file's preview shows (a download stays
	// the file as kept); nil shows the text as it is.
	FilesScrub redact.Scrubber
	// PublicHost is the name requests may carry in Host besides the loopback names and the
	// listener's address (BUDDI_WEB_HOST).
	PublicHost string
	// Tailnet, when set, makes this the dashboard as served on the tailnet node: the caller's
	// tailnet login is the credential (tailnetGate) instead of the loopback binding.
	Tailnet *Tailnet
	// Accounts, Vault and Probe serve Settings → Accounts and models and the first run (with
	// Chat, the agents' accounts); nil leaves those routes out.
	Accounts Accounts
	// Vault is the vault the server reads its agents' keys from.
	Vault Vault
	// Probe tests an account with one short prompt (AccountProbe).
	Probe Prober
	// Missions serves the Missions page; nil leaves those routes out.
	Missions Missions
	// Modes are the agents' execution modes, on the agent cards; nil leaves them out.
	Modes AgentModes
	// Watch serves the Reminders and Sentinels and alerts pages; nil leaves those routes out.
	Watch *Watch
	// Phone serves Settings → Telegram and Settings → Tailnet; nil leaves those routes out.
	Phone *Phone
	// WebFetches serves the web plugin's audit log (web.fetches) on Activity; nil leaves
	// the route out.
	WebFetches WebFetches
	// Memory serves the Memory page; nil leaves those routes out.
	Memory Memory
	// Email serves the Email page; nil leaves its route out.
	Email Email
	// MCP, when set, is buddi mcp's endpoint (mcpserver.Handler), served at /mcp on loopback
	// only, outside the dashboard's credential and request deadline: it checks its own tokens,
	// and an ask waits for a run.
	MCP http.Handler
	// Metrics serves /metrics (metrics.Handler); nil leaves the route out.
	Metrics http.Handler
	// QueueUI is River's own UI (QueueUI), served under QueueUIPrefix; nil leaves it out.
	QueueUI http.Handler
	// RequestTimeout bounds every request but a websocket, its credential's check included,
	// so a database that hangs gets the owner an answer, not a wait. Default 15 s.
	RequestTimeout time.Duration
}

// DefaultRequestTimeout bounds a request when Deps.RequestTimeout is zero.
const DefaultRequestTimeout = 15 * time.Second

// Server serves the dashboard's routes on one listener.
type Server struct {
	http   *http.Server
	mux    *http.ServeMux
	writes []string // the write routes, each behind guardWrite
	routes []string // every route, reads and writes
	deps   Deps
	log    *slog.Logger
	// closing is closed by Shutdown: websockets (hijacked, so the server no longer tracks
	// them) end on it.
	closing chan struct{}
	mu      sync.Mutex // guards closed and the sockets' Add against Shutdown's Wait
	closed  bool
	sockets sync.WaitGroup

	refusedMu sync.Mutex
	refused   map[string]time.Time // reason/uid → when a refusal was last recorded
}

// NewServer builds the routes.
func NewServer(deps Deps) *Server {
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{deps: deps, log: deps.Log.With("service", "dashboard"), closing: make(chan struct{}), refused: map[string]time.Time{}}
	mux := http.NewServeMux()
	s.mux = mux
	s.handle("GET /auth", s.redeem)
	s.handle("GET /api/session", s.session)
	s.handle("GET /api/health", s.health)
	s.handle("GET /api/approvals", s.listApprovals)
	s.handle("GET /api/approvals/{id}", s.getApproval)
	s.write("POST /api/approvals/{id}/approve", s.decideApproval(true))
	s.write("POST /api/approvals/{id}/reject", s.decideApproval(false))
	s.handle("GET /api/permissions", s.listPermissions)
	s.write("POST /api/permissions/{id}/revoke", s.revokePermission)
	if deps.Chat != nil {
		s.handle("GET /api/agents", s.listAgents)
		s.handle("GET /api/conversations", s.listConversations)
		s.handle("GET /api/conversations/{id}", s.getConversation)
		s.handle("GET /api/conversations/{id}/live", s.liveConversation)
		s.write("POST /api/messages", s.sendMessage)
		s.write("POST /api/conversations/{id}/stop", s.stopRun)
		s.write("POST /api/offers/{id}/take", s.takeOffer)
		s.handle("GET /api/attention", s.attention)
		s.questionRoutes()
	}
	s.handle("GET /api/events", s.listEvents)
	s.handle("GET /api/live", s.liveEvents)
	s.handle("GET /api/notifications", s.listNotifications)
	s.write("POST /api/notifications/{id}/seen", s.seenNotification)
	if deps.Jobs != nil {
		s.handle("GET /api/jobs", s.listJobs)
		s.write("POST /api/jobs/{id}/retry", s.retryJob)
		s.write("POST /api/jobs/{id}/dismiss", s.dismissJob)
		s.write("POST /api/jobs/{id}/cancel", s.cancelJob)
	}
	if deps.Developer != nil {
		s.handle("GET /api/developer", s.developerSettings)
		s.write("POST /api/developer/agents/{agent}/mode", s.setMode)
		s.write("POST /api/developer/processes/{agent}/{name}/stop", s.stopProcess)
		s.write("POST /api/developer/processes/stop-all", s.stopAll)
		s.write("POST /api/developer/allowed/{id}/forget", s.forget)
		s.write("POST /api/developer/tailnet", s.setTailnetPreviews)
	}
	if deps.Previews != nil {
		s.handle("GET /api/preview/{plugin}/{name}/link", s.previewLink)
		s.handle("GET /api/preview/{plugin}/{name}/check", s.previewCheck)
	}
	if deps.Artifacts != nil {
		s.handle("GET /api/artifacts/{id}", s.artifact)
	}
	s.filesRoutes()
	s.settingsRoutes()
	s.watchRoutes()
	s.phoneRoutes()
	s.webRoutes()
	s.memoryRoutes()
	s.emailRoutes()
	s.metricsRoutes()
	s.queueUIRoutes()
	s.mux.Handle("GET /", webUI())
	s.routes = append(s.routes, "GET /")
	handler := s.gate(mux)
	if deps.Tailnet != nil {
		handler = s.tailnetGate(mux)
	}
	handler = s.deadline(handler)
	if deps.MCP != nil && deps.Tailnet == nil && !deps.Remote {
		handler = s.withMCP(hostCheck(deps.Addr, "", deps.MCP), handler)
	}
	s.http = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	return s
}

// withMCP sends /mcp to h, whose requests end when the server shuts down, and the rest to
// next.
func (s *Server) withMCP(h, next http.Handler) http.Handler {
	s.routes = append(s.routes, "POST /mcp")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcp" {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-s.closing:
				cancel()
			case <-ctx.Done():
			}
		}()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// handle registers a read route.
func (s *Server) handle(pattern string, h http.HandlerFunc) {
	s.routes = append(s.routes, pattern)
	s.mux.HandleFunc(pattern, h)
}

// write registers a write route behind guardWrite.
func (s *Server) write(pattern string, h http.HandlerFunc) {
	s.writes = append(s.writes, pattern)
	s.routes = append(s.routes, pattern)
	s.mux.Handle(pattern, guardWrite(h))
}

// Routes lists every route ("GET /api/…", "POST /api/…"), for the test that walks them all.
func (s *Server) Routes() []string { return append([]string(nil), s.routes...) }

// WriteRoutes lists the write routes ("POST /api/…"), for the test that walks them all.
func (s *Server) WriteRoutes() []string { return append([]string(nil), s.writes...) }

// session answers the page's first call: it sets the CSRF cookie (gate did) and says whether
// the dashboard is remote.
func (s *Server) session(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"csrf_header": CSRFHeader, "remote": s.deps.Remote || s.deps.Tailnet != nil})
}

// deadline gives every request but a websocket the request timeout.
func (s *Server) deadline(next http.Handler) http.Handler {
	limit := s.deps.RequestTimeout
	if limit <= 0 {
		limit = DefaultRequestTimeout
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if websocket.IsWebSocketUpgrade(r) {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithTimeoutCause(r.Context(), limit, errTooSlow)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// errTooSlow is the cause of a request that ran out of its time.
var errTooSlow = errors.New("the database did not answer in time")

// slow reports whether err is a failure the owner can act on, and answers it, with nothing
// changed (every write is one transaction, rolled back): a request that ran out of its time
// (503), or a disk too full to save anything (507).
func slow(w http.ResponseWriter, r *http.Request, err error) bool {
	if diskFull(err) {
		writeError(w, http.StatusInsufficientStorage, "the disk that holds buddi's data is full, so nothing was saved: free some space there, then try again (`buddi doctor` says how much is left)")
		return true
	}
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(context.Cause(r.Context()), errTooSlow) {
		return false
	}
	writeError(w, http.StatusServiceUnavailable, "the database did not answer in time, so nothing was changed: try again in a moment (`buddi doctor` checks it)")
	return true
}

// diskFull reports whether err is a write that found no room: PostgreSQL's disk_full
// (SQLSTATE 53100), or ENOSPC from a file of buddi's own.
func diskFull(err error) bool {
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok && pe.Code == "53100" {
		return true
	}
	return errors.Is(err, syscall.ENOSPC)
}

// Handler is the routes, for tests that serve them with httptest.
func (s *Server) Handler() http.Handler { return s.http.Handler }

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	rep := s.deps.Health(ctx)
	code := http.StatusOK
	if rep.Status != "ok" { // a monitor reads the code: anything but ok is unavailable
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, rep)
}

// Serve answers requests on l until Shutdown; it returns nil after a shutdown.
func (s *Server) Serve(l net.Listener) error {
	err := s.http.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops taking connections and waits for open requests until ctx ends, then closes
// what is left.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.closing)
	}
	s.mu.Unlock()
	defer s.sockets.Wait()
	if err := s.http.Shutdown(ctx); err != nil {
		_ = s.http.Close()
		return fmt.Errorf("dashboard shutdown: %w", err)
	}
	return nil
}
