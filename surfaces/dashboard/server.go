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

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/executor"
	"buddi/core/registry"
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
	// Insert enqueues the execution of an approved action.
	Insert executor.Inserter
	// Tools is the registry, to grant standing permissions for tools that opt in.
	Tools *registry.Registry
	// Addr is the listener's loopback address (host:port): a request's Host must be it, or
	// 127.0.0.1, localhost or [::1] with its port. Empty allows those names on any port.
	Addr string
	// Log receives what the server logs, tagged service=dashboard. Default: discard.
	Log *slog.Logger
	// Chat serves the agents and conversations; nil leaves those routes out.
	Chat *Chat
}

// Server serves the dashboard's routes on one listener.
type Server struct {
	http *http.Server
	deps Deps
	log  *slog.Logger
	// closing is closed by Shutdown: websockets (hijacked, so the server no longer tracks
	// them) end on it.
	closing chan struct{}
	mu      sync.Mutex // guards closed and the sockets' Add against Shutdown's Wait
	closed  bool
	sockets sync.WaitGroup
}

// NewServer builds the routes.
func NewServer(deps Deps) *Server {
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{deps: deps, log: deps.Log.With("service", "dashboard"), closing: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/health", s.health)
	mux.HandleFunc("GET /api/approvals", s.listApprovals)
	mux.HandleFunc("GET /api/approvals/{id}", s.getApproval)
	mux.Handle("POST /api/approvals/{id}/approve", guardWrite(s.decideApproval(true)))
	mux.Handle("POST /api/approvals/{id}/reject", guardWrite(s.decideApproval(false)))
	mux.HandleFunc("GET /api/permissions", s.listPermissions)
	mux.Handle("POST /api/permissions/{id}/revoke", guardWrite(http.HandlerFunc(s.revokePermission)))
	if deps.Chat != nil {
		mux.HandleFunc("GET /api/agents", s.listAgents)
		mux.HandleFunc("GET /api/conversations", s.listConversations)
		mux.HandleFunc("GET /api/conversations/{id}", s.getConversation)
		mux.HandleFunc("GET /api/conversations/{id}/live", s.liveConversation)
		mux.Handle("POST /api/messages", guardWrite(http.HandlerFunc(s.sendMessage)))
	}
	s.http = &http.Server{
		Handler:           loopbackOnly(deps.Addr, mux),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	return s
}

// Handler is the routes, for tests that serve them with httptest.
func (s *Server) Handler() http.Handler { return s.http.Handler }

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	writeJSON(w, http.StatusOK, s.deps.Health(ctx))
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
