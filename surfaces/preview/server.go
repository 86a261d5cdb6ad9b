package preview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/seal"
	"buddi/surfaces/preview/listening"
	"buddi/surfaces/webauth"
	"buddi/tailnet/fetchsite"
)

// Target is where a preview's requests go: the port a process said it listens on, and the
// process (its pid leads the group buddi spawned).
type Target struct {
	Port int // the port the process said it listens on
	Pid  int // the process, leader of the group buddi spawned
}

// ErrUnknown means no running process has that name.
var ErrUnknown = errors.New("preview: no such running process")

// Resolver finds the target of a plugin's preview by process name, on every request.
type Resolver func(ctx context.Context, plugin, name string) (Target, error)

// Deps are what the preview server needs.
type Deps struct {
	// Pool holds the tickets and preview sessions.
	Pool *pgxpool.Pool
	// Seal is the installation's key; tickets and sessions are stored as its keyed hashes.
	Seal seal.Key
	// Resolve finds a preview's target.
	Resolve Resolver
	// Refused are ports never proxied to besides the privileged ones: buddi's own listeners
	// and Postgres's.
	Refused []int
	// Log receives what the server logs. Nil discards.
	Log *slog.Logger
}

// Server proxies previews.
type Server struct {
	deps    Deps
	handler http.Handler
	log     *slog.Logger
	cur     *http.Server       // the server of the current Serve; a restart makes a new one
	cancel  context.CancelFunc // ends the requests (and relayed websockets) of cur

	mu        sync.Mutex
	checks    map[string]bool             // subject → the first HTML response referenced absolute assets
	verified  map[Target]listening.Socket // a target's socket, found once, rechecked by one readlink
	upstream  map[string]verifiedSocket   // by address: the socket a new connection there must reach
	sessions  map[string]*session         // by subject + token
	proxies   map[string]http.Handler     // by subject and upstream port
	transport *http.Transport             // to the dev servers, with keep-alive

	questions atomic.Int64 // answers the database gave about preview sessions
}

// session is what the database last said of a preview session.
type session struct {
	confirmed time.Time     // when the database last said it is valid; zero: not yet, or no longer
	answered  chan struct{} // closed when the question under way is answered; nil when none is
}

// sessionRecheck is how long a preview session, once found valid, is trusted without the
// database saying so again.
const sessionRecheck = 30 * time.Second

// sessionRefresh is when a session in use is asked about again, in the background, so that
// the answer comes before its trust runs out.
const sessionRefresh = 20 * time.Second

// sessionAsk bounds one question to the database about a session.
const sessionAsk = 10 * time.Second

// maxSessions is how many sessions the server remembers.
const maxSessions = 1024

// CookieName is the preview session's cookie, scoped by path to one preview.
const CookieName = "buddi_preview"

// New builds the preview server.
func New(deps Deps) *Server {
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{deps: deps, log: deps.Log.With("service", "preview"), checks: map[string]bool{},
		verified: map[Target]listening.Socket{}, upstream: map[string]verifiedSocket{}, sessions: map[string]*session{}, proxies: map[string]http.Handler{}}
	s.transport = &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second, ResponseHeaderTimeout: 5 * time.Minute,
		DialContext: s.dialVerified}
	s.handler = http.HandlerFunc(s.serve)
	return s
}

// Handler is the server's handler, for tests.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve answers on l until Shutdown. Each call serves with a new HTTP server, so the actor
// that owns it can serve again after a restart.
func (s *Server) Serve(l net.Listener) error {
	// Every request's context ends with the server: the proxy then closes the websockets it
	// relays, which, hijacked, are out of the HTTP server's reach.
	base, cancel := context.WithCancel(context.Background())
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context { return base }}
	s.mu.Lock()
	s.cur, s.cancel = srv, cancel
	s.mu.Unlock()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		cancel()
		return err
	}
	return nil
}

// Shutdown stops the current server and the websockets it relays.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	srv, cancel := s.cur, s.cancel
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	cancel()
	return srv.Shutdown(ctx)
}

// Subject names one preview: "<plugin>/<name>".
func Subject(plugin, name string) string { return plugin + "/" + name }

// Path is a preview's path prefix on the preview origin.
func Path(plugin, name string) string { return "/preview/" + plugin + "/" + name + "/" }

var segment = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

func unauthorized(w http.ResponseWriter) { w.WriteHeader(http.StatusUnauthorized) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/preview/"), "/", 3)
	if !strings.HasPrefix(r.URL.Path, "/preview/") || len(parts) < 2 || !segment.MatchString(parts[0]) || !segment.MatchString(parts[1]) {
		unauthorized(w)
		return
	}
	plugin, name := parts[0], parts[1]
	subject, prefix := Subject(plugin, name), Path(plugin, name)
	if len(parts) == 2 { // /preview/developer/web → the preview's root, with its slash
		http.Redirect(w, r, prefix, http.StatusFound)
		return
	}
	if ticket := r.URL.Query().Get("ticket"); ticket != "" {
		token, ttl, err := webauth.Redeem(r.Context(), s.deps.Pool, s.deps.Seal, ticket, webauth.PurposePreview, subject)
		if err != nil {
			unauthorized(w)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: CookieName, Value: token, Path: prefix, HttpOnly: true,
			SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil, MaxAge: int(ttl.Seconds())})
		clean := *r.URL
		q := clean.Query()
		q.Del("ticket")
		clean.RawQuery = q.Encode()
		http.Redirect(w, r, clean.RequestURI(), http.StatusSeeOther)
		return
	}
	if !s.anyValidSession(r, subject) {
		unauthorized(w)
		return
	}
	// The cookie is SameSite=Lax, which pages on other ports of the host (other sites' pages
	// too, on a navigation) still get sent with their requests: a write must come from the
	// preview's own page, and a read from it or a navigation.
	if err := fetchsite.Check(r); err != nil {
		fetchsite.Refuse(w, err)
		return
	}
	sock, err := s.proxyTarget(r.Context(), plugin, name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	s.proxyFor(subject, prefix, sock.Addr).ServeHTTP(w, r)
}

// maxSessionCookies is how many buddi_preview cookies of one request are tried.
const maxSessionCookies = 16

// anyValidSession reports whether one of the request's buddi_preview cookies opens the
// preview: a page can add a cookie of that name on a narrower path (its script shares the
// host's cookie jar), which the browser then sends first, so not only the first is tried.
func (s *Server) anyValidSession(r *http.Request, subject string) bool {
	tried := 0
	for _, c := range r.Cookies() {
		if c.Name != CookieName || c.Value == "" {
			continue
		}
		if s.validSession(r.Context(), subject, c.Value) {
			return true
		}
		if tried++; tried == maxSessionCookies {
			return false
		}
	}
	return false
}

// Root serves one preview at the root of an origin of its own (a tailnet port of its own,
// §12): the port is resolved and checked on every request as on the preview listener (and must
// still be port, the one the origin was opened for), buddi's cookies are kept from the app, and
// no path prefix is taken off. The app is addressed as it is on loopback, at the address of its
// verified socket (Host 127.0.0.1:port, or [::1]:port for a socket on every IPv6 address, and
// an Origin of its own page likewise), which dev servers answer by default; other names they
// refuse unless told to allow them. Who may call is the caller's business (the tailnet gate);
// this handler checks no preview session, but a write must come from the app's own page and a
// read from it or a navigation (fetchsite.Check), the caller's identity riding on every
// request its browser makes.
func (s *Server) Root(plugin, name string, port int) http.Handler {
	subject := "root:" + Subject(plugin, name)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := fetchsite.Check(r); err != nil {
			fetchsite.Refuse(w, err)
			return
		}
		sock, err := s.proxyTarget(r.Context(), plugin, name)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if _, p, _ := net.SplitHostPort(sock.Addr); p != strconv.Itoa(port) {
			http.Error(w, fmt.Sprintf("the process %s now listens on port %s: open that port", name, p), http.StatusBadGateway)
			return
		}
		r = r.Clone(r.Context())
		if o, err := url.Parse(r.Header.Get("Origin")); err == nil && o.Host != "" && strings.EqualFold(o.Host, r.Host) {
			r.Header.Set("Origin", "http://"+sock.Addr)
		}
		r.Host = sock.Addr
		s.proxyFor(subject, "/", sock.Addr).ServeHTTP(w, r)
	})
}

// AppCookie reports whether an app's Set-Cookie value may reach the browser: it names a
// cookie, and not one of buddi's. A browser reads the name as what comes before the first "="
// of the part before the first ";", white space trimmed; with no "=" there, or nothing before
// it, the cookie has no name and comes back as its bare value, so "=buddi_session_4317=x"
// would come back as buddi's own cookie. Names are compared without regard to case.
func AppCookie(setCookie string) bool {
	pair, _, _ := strings.Cut(setCookie, ";")
	name, _, ok := strings.Cut(pair, "=")
	name = strings.Trim(name, " \t")
	return ok && name != "" && !strings.HasPrefix(strings.ToLower(name), "buddi_")
}

// validSession reports whether token opens subject's preview. A session the database said is
// valid is trusted for sessionRecheck from that answer; a session in use is asked about again
// once sessionRefresh has passed, in the background, so that its requests never wait for the
// database; one that was not asked about in time waits for an answer, one question however
// many requests carry it.
func (s *Server) validSession(ctx context.Context, subject, token string) bool {
	key := subject + "\x00" + token
	s.mu.Lock()
	e, ok := s.sessions[key]
	if ok {
		if age := time.Since(e.confirmed); age < sessionRecheck {
			if age >= sessionRefresh && e.answered == nil {
				e.answered = make(chan struct{})
				go s.ask(context.Background(), key, subject, token, e)
			}
			s.mu.Unlock()
			return true
		}
	} else {
		if len(s.sessions) >= maxSessions {
			s.forgetSessions()
		}
		e = &session{}
		s.sessions[key] = e
	}
	answered := e.answered
	if answered == nil {
		answered = make(chan struct{})
		e.answered = answered
		// The question is the session's, not this request's: a client that goes away does
		// not fail the others waiting for the answer.
		go s.ask(context.WithoutCancel(ctx), key, subject, token, e)
	}
	s.mu.Unlock()
	select {
	case <-answered:
	case <-ctx.Done():
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(e.confirmed) < sessionRecheck
}

// ask asks the database whether a session is valid and records the answer in e: confirmed
// now, or forgotten when the database no longer has it. An unanswered question (the database
// unreachable) leaves the last confirmation to run out.
func (s *Server) ask(ctx context.Context, key, subject, token string, e *session) {
	ctx, cancel := context.WithTimeout(ctx, sessionAsk)
	defer cancel()
	valid, err := webauth.Valid(ctx, s.deps.Pool, s.deps.Seal, token, webauth.PurposePreview, subject)
	s.questions.Add(1)
	if err != nil {
		s.log.Warn("preview session not checked", "subject", subject, "err", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err == nil && valid:
		e.confirmed = time.Now()
	case err == nil:
		e.confirmed = time.Time{}
		if s.sessions[key] == e {
			delete(s.sessions, key)
		}
	}
	close(e.answered)
	e.answered = nil
}

// forgetSessions makes room among the sessions: those whose trust ran out go first, then all
// but those with a question under way (their requests wait on them). Called with s.mu held.
func (s *Server) forgetSessions() {
	for k, e := range s.sessions {
		if e.answered == nil && time.Since(e.confirmed) >= sessionRecheck {
			delete(s.sessions, k)
		}
	}
	if len(s.sessions) < maxSessions {
		return
	}
	for k, e := range s.sessions {
		if e.answered == nil {
			delete(s.sessions, k)
		}
	}
}

func (s *Server) proxyFor(subject, prefix, addr string) http.Handler {
	key := subject + "\x00" + addr
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.proxies[key]
	if !ok {
		if len(s.proxies) > 256 {
			clear(s.proxies)
		}
		p = s.proxy(subject, prefix, addr)
		s.proxies[key] = p
	}
	return p
}

// target resolves the preview and checks its port, and returns the socket the process
// listens on, whose own address the proxy connects to: the socket found once per process
// and port, and its descriptor read again now.
func (s *Server) target(ctx context.Context, plugin, name string) (listening.Socket, error) {
	t, err := s.deps.Resolve(ctx, plugin, name)
	if err != nil {
		return listening.Socket{}, fmt.Errorf("no running process %s: start it again", name)
	}
	return s.allowed(t, true)
}

// proxyTarget is target for a request the proxy forwards, on every request: the socket found
// once per process and port is not read again here, since the proxy's connections are made
// by dialVerified, which reads it again for every new connection (a kept connection stays
// with the socket that accepted it).
func (s *Server) proxyTarget(ctx context.Context, plugin, name string) (listening.Socket, error) {
	t, err := s.deps.Resolve(ctx, plugin, name)
	if err != nil {
		return listening.Socket{}, fmt.Errorf("no running process %s: start it again", name)
	}
	return s.allowed(t, false)
}

// verifiedSocket is the socket a process was found listening on, with the process.
type verifiedSocket struct {
	target Target
	sock   listening.Socket
}

// allowed checks t's port and finds the socket its process listens on (once per process
// and port); recheck reads its descriptor again.
func (s *Server) allowed(t Target, recheck bool) (listening.Socket, error) {
	if err := refused(t.Port, s.deps.Refused); err != nil {
		return listening.Socket{}, err
	}
	s.mu.Lock()
	l, ok := s.verified[t]
	s.mu.Unlock()
	if ok && (!recheck || l.Still()) {
		return l, nil
	}
	return s.find(t)
}

// find looks for the socket t's process listens on, in /proc, and keeps it.
func (s *Server) find(t Target) (listening.Socket, error) {
	l, ok, err := listening.Find(t.Pid, t.Port)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || !ok {
		if old, had := s.verified[t]; had {
			delete(s.verified, t)
			delete(s.upstream, old.Addr)
		}
		return listening.Socket{}, fmt.Errorf("the process is not listening on port %d at 127.0.0.1, [::1] or every address", t.Port)
	}
	if len(s.verified) > 256 {
		clear(s.verified)
		clear(s.upstream)
	}
	s.verified[t] = l
	s.upstream[l.Addr] = verifiedSocket{target: t, sock: l}
	return l, nil
}

// dialVerified opens the proxy's connections: only to an address whose socket a process was
// found listening on, and, once connected, only while that process's descriptor still holds
// that socket (read again; when it no longer does, the socket is looked for once more, the
// process may have opened a new one). A server that took the port after the process let it
// go is never reached.
func (s *Server) dialVerified(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	for try := 0; ; try++ {
		s.mu.Lock()
		v, ok := s.upstream[addr]
		s.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("preview: %s is no process's verified socket", addr)
		}
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if v.sock.Still() {
			return conn, nil
		}
		conn.Close()
		if try > 0 {
			return nil, fmt.Errorf("preview: the process no longer listens at %s", addr)
		}
		if l, err := s.find(v.target); err != nil || l.Addr != addr {
			return nil, fmt.Errorf("preview: the process no longer listens at %s", addr)
		}
	}
}

// refused returns why port is never previewed nor screenshotted, or nil: privileged or invalid
// ports, Postgres's, and the others given (buddi's own listeners).
func refused(port int, others []int) error {
	if port < 1024 || port > 65535 {
		return fmt.Errorf("port %d is privileged or invalid and is never previewed", port)
	}
	for _, p := range append([]int{5432}, others...) {
		if port == p {
			return fmt.Errorf("port %d belongs to buddi or its database and is never previewed", port)
		}
	}
	return nil
}

// copyBuffers are the proxies' copy buffers, reused across requests (a ReverseProxy without
// a pool allocates 32 KiB for every response).
var copyBuffers = &bufferPool{pool: sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}}

// bufferPool is an httputil.BufferPool over a sync.Pool.
type bufferPool struct{ pool sync.Pool }

// Get returns a buffer.
func (p *bufferPool) Get() []byte { return *p.pool.Get().(*[]byte) }

// Put returns a buffer to the pool.
func (p *bufferPool) Put(b []byte) { p.pool.Put(&b) }

var absoluteAsset = regexp.MustCompile(`(?i)\b(?:src|href)\s*=\s*["']/([^/"'][^"']*)?["']`)

// proxy forwards to the socket's address with the prefix taken off and buddi's cookies taken
// out (both ways: see AppCookie); the first HTML response of each preview is read for
// absolute asset paths.
func (s *Server) proxy(subject, prefix, addr string) http.Handler {
	upstream := &url.URL{Scheme: "http", Host: addr}
	return &httputil.ReverseProxy{
		Transport:  s.transport,
		BufferPool: copyBuffers,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
			pr.Out.URL.Path = "/" + strings.TrimPrefix(pr.In.URL.Path, prefix)
			pr.Out.URL.RawPath = ""
			// The Host the browser used stays: dev servers compare it with the Origin of a
			// websocket (a rewritten Host would make every hot-reload socket look cross-site).
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
			if p := strings.TrimSuffix(prefix, "/"); p != "" {
				pr.Out.Header.Set("X-Forwarded-Prefix", p)
			}
			var keep []string
			for _, c := range pr.In.Cookies() {
				if !strings.HasPrefix(c.Name, "buddi_") {
					keep = append(keep, c.Name+"="+c.Value)
				}
			}
			pr.Out.Header.Del("Cookie")
			if len(keep) > 0 {
				pr.Out.Header.Set("Cookie", strings.Join(keep, "; "))
			}
		},
		ModifyResponse: func(resp *http.Response) error {
			// The app may set its own cookies, never one of buddi's (browsers share cookies
			// across the ports of a host).
			if cookies := resp.Header.Values("Set-Cookie"); len(cookies) > 0 {
				resp.Header.Del("Set-Cookie")
				for _, c := range cookies {
					if AppCookie(c) {
						resp.Header.Add("Set-Cookie", c)
					}
				}
			}
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				return nil
			}
			s.mu.Lock()
			_, seen := s.checks[subject]
			s.mu.Unlock()
			if seen || prefix == "/" { // a root preview has no prefix to break: nothing asks
				return nil
			}
			body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			if err != nil {
				return err
			}
			rest := resp.Body
			resp.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), rest), rest}
			absolute := false
			for _, m := range absoluteAsset.FindAllStringSubmatch(string(body), -1) {
				if !strings.HasPrefix(m[1], "preview/") {
					absolute = true
					break
				}
			}
			s.mu.Lock()
			s.checks[subject] = absolute
			s.mu.Unlock()
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			s.log.Warn("preview upstream", "subject", subject, "err", err)
			http.Error(w, "the preview's process did not answer", http.StatusBadGateway)
		},
	}
}

// Check is what the link route's /check reports: whether the process can be previewed now,
// and whether its first HTML response referenced absolute assets (an app that assumes it
// lives at the root of a host may break under the path prefix).
type Check struct {
	OK             bool   `json:"ok"`                // the preview can be opened now
	AbsoluteAssets bool   `json:"absoluteAssets"`    // its first page referenced /… assets
	Problem        string `json:"problem,omitempty"` // why not, when not OK
}

// CheckPreview reports on a preview.
func (s *Server) CheckPreview(ctx context.Context, plugin, name string) Check {
	if _, err := s.target(ctx, plugin, name); err != nil {
		return Check{Problem: err.Error()}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return Check{OK: true, AbsoluteAssets: s.checks[Subject(plugin, name)]}
}

// Link issues a single-use ticket for one preview and returns the URL that redeems it, on
// host (the name the owner's browser used for the dashboard) and the preview port.
func (s *Server) Link(ctx context.Context, host string, port int, plugin, name string) (string, error) {
	if !segment.MatchString(plugin) || !segment.MatchString(name) {
		return "", fmt.Errorf("no preview %s/%s: %w", plugin, name, ErrUnknown)
	}
	if _, err := s.target(ctx, plugin, name); err != nil {
		return "", err
	}
	ticket, err := webauth.Issue(ctx, s.deps.Pool, s.deps.Seal, webauth.PurposePreview, Subject(plugin, name))
	if err != nil {
		return "", err
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(port)) + Path(plugin, name) + "?ticket=" + url.QueryEscape(ticket), nil
}
