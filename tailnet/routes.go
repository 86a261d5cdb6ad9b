package tailnet

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"buddi/tailnet/fetchsite"
)

// Route is one process served on a tailnet port of its own: the port it listens on locally is
// the port it gets on the tailnet.
type Route struct {
	Plugin string // the plugin that runs the process
	Name   string // the process's name
	Port   int    // its port, locally and on the tailnet
}

// Routes keeps a set of routes open on the node: Reconcile opens the wanted ones that are not
// open and closes the open ones no longer wanted.
type Routes struct {
	listen  func(port int) (net.Listener, error)
	handler func(Route) http.Handler
	log     *slog.Logger

	mu      sync.Mutex
	open    map[Route]*served
	failing map[Route]bool // routes whose port could not be opened, warned about once
	closed  bool
}

type served struct {
	srv  *http.Server
	done chan struct{}
	// ctx ends when the route closes: requests in flight, and websockets the proxy relays
	// (which a server's Shutdown does not reach), end with it.
	ctx    context.Context
	cancel context.CancelFunc
}

// NewRoutes builds an empty set: listen opens a port on the node (TLS when the tailnet offers
// a certificate), handler serves one route.
func NewRoutes(listen func(port int) (net.Listener, error), handler func(Route) http.Handler, log *slog.Logger) *Routes {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Routes{listen: listen, handler: handler, log: log.With("service", "tailnet"), open: map[Route]*served{}, failing: map[Route]bool{}}
}

// Reconcile makes the open routes the wanted ones. A port that cannot be opened is logged and
// tried again at the next call.
func (rs *Routes) Reconcile(want []Route) {
	rs.mu.Lock()
	if rs.closed {
		rs.mu.Unlock()
		return
	}
	var gone []*served
	for r, s := range rs.open {
		if !slices.Contains(want, r) {
			gone = append(gone, s)
			delete(rs.open, r)
			rs.log.Info("closed a tailnet port", "process", r.Name, "port", r.Port)
		}
	}
	for r := range rs.failing {
		if !slices.Contains(want, r) {
			delete(rs.failing, r)
		}
	}
	var add []Route
	for _, r := range want {
		if _, ok := rs.open[r]; !ok && !slices.Contains(add, r) {
			add = append(add, r)
		}
	}
	rs.mu.Unlock()
	stopAll(gone)
	for _, r := range add {
		l, err := rs.listen(r.Port)
		if err != nil {
			rs.mu.Lock()
			warned := rs.failing[r]
			rs.failing[r] = true
			rs.mu.Unlock()
			if !warned { // tried again at every call; said once
				rs.log.Warn("open a tailnet port", "process", r.Name, "port", r.Port, "err", err)
			}
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		s := &served{done: make(chan struct{}), ctx: ctx, cancel: cancel}
		s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: EndWith(ctx, rs.handler(r))}
		go func() {
			defer close(s.done)
			if err := s.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				rs.log.Warn("a tailnet port stopped serving", "process", r.Name, "port", r.Port, "err", err)
			}
		}()
		rs.mu.Lock()
		if rs.closed {
			rs.mu.Unlock()
			s.stop()
			return
		}
		rs.open[r] = s
		delete(rs.failing, r)
		rs.mu.Unlock()
		rs.log.Info("opened a tailnet port", "process", r.Name, "port", r.Port)
	}
}

// Open lists the routes open now.
func (rs *Routes) Open() []Route {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make([]Route, 0, len(rs.open))
	for r := range rs.open {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Route) int { return a.Port - b.Port })
	return out
}

// Close closes every route and keeps Reconcile from opening more.
func (rs *Routes) Close() {
	rs.mu.Lock()
	rs.closed = true
	open := rs.open
	rs.open = map[Route]*served{}
	rs.mu.Unlock()
	var all []*served
	for _, s := range open {
		all = append(all, s)
	}
	stopAll(all)
}

// stopAll stops routes side by side, so closing many takes as long as closing one.
func stopAll(list []*served) {
	var wg sync.WaitGroup
	for _, s := range list {
		wg.Go(s.stop)
	}
	wg.Wait()
}

// stop shuts the route's server down, giving open requests two seconds: a server on a tsnet
// listener can hang in Close, so it is given up on after that.
func (s *served) stop() {
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	select {
	case <-s.done:
	case <-time.After(2 * time.Second):
	}
}

// EndWith runs next with each request's context also ending when ctx ends: requests in
// flight, and websockets a proxy relays (which a server's Shutdown does not reach), end with
// what serves them.
func EndWith(ctx context.Context, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()
		next.ServeHTTP(w, r.WithContext(rctx))
	})
}

// OwnPagesOnly refuses what a page on another site (or on another port of the node) makes the
// owner's browser send (a form post, an image, a script, a cross-origin fetch, a websocket),
// which the owner's tailnet identity would otherwise carry: fetchsite.Check's rule. A write
// (every method but GET, HEAD and OPTIONS, and a websocket) must come from the app's own page:
// Sec-Fetch-Site same-origin or none, or, over plain HTTP where browsers send no
// Sec-Fetch-Site, an Origin naming the app's own address; a write that says neither is
// refused. A read gets through from the app's own pages, from a top-level navigation, and
// from a client that names no other page.
func OwnPagesOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := fetchsite.Check(r); err != nil {
			fetchsite.Refuse(w, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}
