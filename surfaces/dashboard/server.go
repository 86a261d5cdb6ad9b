// Package dashboard is the web surface: the HTTP listener on 127.0.0.1:4317 (BUDDI_WEB_PORT)
// and its routes. For now it serves GET /api/health.
package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"

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

// Server serves the dashboard's routes on one listener.
type Server struct {
	http *http.Server
	log  *slog.Logger
}

// NewServer builds the routes.
func NewServer(healthFn HealthFunc, log *slog.Logger) *Server {
	log = log.With("service", "dashboard")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/health", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		rep := healthFn(ctx)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			log.Warn("write health", "err", err)
		}
	})
	return &Server{
		log: log,
		http: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		},
	}
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
	if err := s.http.Shutdown(ctx); err != nil {
		_ = s.http.Close()
		return fmt.Errorf("dashboard shutdown: %w", err)
	}
	return nil
}
