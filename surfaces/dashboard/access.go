package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/seal"
	"buddi/internal/socktable"
	"buddi/surfaces/webauth"
)

// Cookie names carry the port the request arrived on (from its Host): a browser keeps one
// cookie of a name per host whatever the port, so two buddis on one machine, or one reached
// two ways, keep their sessions apart.
func cookieName(base string, r *http.Request) string {
	_, port, err := net.SplitHostPort(r.Host)
	if err != nil || port == "" {
		port = "80"
		if r.TLS != nil {
			port = "443"
		}
	}
	return base + "_" + port
}

// CSRFHeader carries the double-submitted token on every write.
const CSRFHeader = "X-Buddi-CSRF"

// csrfCookie returns the request's CSRF token, setting a new cookie when it has none. It is
// readable by the page (it must send it back in CSRFHeader) and never leaves for another site.
func csrfCookie(w http.ResponseWriter, r *http.Request) string {
	name := cookieName("buddi_csrf", r)
	if c, err := r.Cookie(name); err == nil && len(c.Value) >= 32 {
		return c.Value
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	token := base64.RawURLEncoding.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{Name: name, Value: token, Path: "/", SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	r.AddCookie(&http.Cookie{Name: name, Value: token})
	return token
}

// guardWrite refuses a write that a page on another origin could have sent: a missing or
// foreign Origin, a cross-site fetch, a body that is not JSON (a form post cannot send
// application/json without a preflight, and buddi answers no preflight: there is no CORS),
// and a CSRF token in CSRFHeader that is missing or differs from the cookie (double submit).
//
// A request made with the command line's bearer token skips the cookie checks: a browser
// cannot attach that header to a request another site makes without a preflight, which buddi
// never answers.
func guardWrite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if byBearer(r) {
			next.ServeHTTP(w, r)
			return
		}
		u, err := url.Parse(r.Header.Get("Origin"))
		if r.Header.Get("Origin") == "" || err != nil || u.Host != r.Host || (u.Scheme != "http" && u.Scheme != "https") {
			writeError(w, http.StatusForbidden, "this request did not come from buddi's own page and is refused")
			return
		}
		switch r.Header.Get("Sec-Fetch-Site") {
		case "", "same-origin", "none":
		default:
			writeError(w, http.StatusForbidden, "this request came from another site and is refused")
			return
		}
		c, err := r.Cookie(cookieName("buddi_csrf", r))
		sent := r.Header.Get(CSRFHeader)
		if err != nil || len(c.Value) < 32 || subtle.ConstantTimeCompare([]byte(c.Value), []byte(sent)) != 1 {
			writeError(w, http.StatusForbidden, "the request's CSRF token is missing or wrong: reload the page")
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" && !strings.HasPrefix(ct, "application/json;") {
			writeError(w, http.StatusUnsupportedMediaType, "send the body as application/json")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// gate applies the access rules to every request, reads and websockets included: the Host
// check, then a credential. On loopback as off it, the binding is not a credential (another
// local account, or code the developer agent runs, can open a TCP connection as well as the
// owner's browser can): a request needs the command line's bearer token or a live session
// from a sign-in ticket. Only the ticket exchange itself (/auth) is open. Everything else is
// a 401 and a dashboard.refused event.
func (s *Server) gate(next http.Handler) http.Handler {
	return hostCheck(s.deps.Addr, s.deps.PublicHost, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/auth" && r.Method == http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		if h := r.Header.Get("Authorization"); h != "" {
			token, ok := strings.CutPrefix(h, "Bearer ")
			if ok && r.Method == http.MethodGet && r.URL.Path == "/metrics" && webauth.SameToken(token, s.deps.MetricsToken) {
				next.ServeHTTP(w, r) // the scrape token opens this one read and nothing else
				return
			}
			if !ok || !webauth.SameToken(token, s.deps.CLIToken) {
				s.refuse(w, r, "a wrong bearer token")
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), bearerKey{}, true)))
			return
		}
		ok, err := validSession(r, s.deps.Pool, s.deps.Seal, "")
		if err != nil {
			if slow(w, r, err) {
				return
			}
			writeError(w, http.StatusServiceUnavailable, "the session could not be checked: the database is not answering")
			return
		}
		if !ok {
			s.refuse(w, r, "no session")
			return
		}
		if websocket.IsWebSocketUpgrade(r) && !sameOrigin(r) {
			// A page on another site can open a websocket with the owner's cookie; only
			// buddi's own page may.
			s.refuse(w, r, "a websocket from another origin")
			return
		}
		csrfCookie(w, r)
		next.ServeHTTP(w, r)
	}))
}

// bearerKey marks a request made with the command line's token: it is no browser's, so the
// write checks meant for cookies (Origin, CSRF) do not apply to it.
type bearerKey struct{}

// byBearer reports whether r was authenticated with the command line's token.
func byBearer(r *http.Request) bool {
	v, _ := r.Context().Value(bearerKey{}).(bool)
	return v
}

// sameOrigin reports whether r's Origin is this server's own (scheme http or https, the
// request's Host). A missing Origin is not the same origin.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	u, err := url.Parse(o)
	return o != "" && err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host == r.Host && u.Path == "" && u.User == nil
}

// refuse answers a request that carries no credential with a 401 (the sign-in page for a
// page, one sentence for the API) and records it as dashboard.refused, once a minute per
// reason and local account.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, reason string) {
	s.recordRefusal(r, reason)
	// A program (the API, a scrape, River's page's API, anything that sent a token) gets the
	// sentence as JSON; a browser opening a page gets the sign-in page.
	machine := strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/metrics" ||
		strings.HasPrefix(r.URL.Path, QueueUIPrefix+"/api/") || r.Header.Get("Authorization") != ""
	if machine || websocket.IsWebSocketUpgrade(r) {
		writeError(w, http.StatusUnauthorized, "sign in first: run `buddi dashboard` where buddi runs and open the link it prints")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte(signInPage))
}

// recordRefusal appends dashboard.refused with the route, the reason and, on loopback, the
// local account that opened the connection (read from the kernel's socket table), at most
// once a minute for each reason and account.
func (s *Server) recordRefusal(r *http.Request, reason string) {
	uid := -1
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		uid = socktable.PeerUID(r.RemoteAddr, local.String())
	}
	key := fmt.Sprintf("%s/%d", reason, uid)
	now := time.Now()
	s.refusedMu.Lock()
	last, seen := s.refused[key]
	if !seen || now.Sub(last) >= time.Minute {
		if len(s.refused) > 4096 {
			clear(s.refused)
		}
		s.refused[key] = now
	}
	s.refusedMu.Unlock()
	if seen && now.Sub(last) < time.Minute {
		return
	}
	payload := events.DashboardRefusedPayload{Method: r.Method, Path: r.URL.Path, Reason: reason, Remote: r.RemoteAddr}
	if uid >= 0 {
		payload.UID = &uid
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 3*time.Second)
	defer cancel()
	if _, err := eventlog.Append(ctx, s.deps.Pool, events.DashboardRefused, "", payload); err != nil {
		s.log.Warn("record a refused request", "err", err)
	}
	s.log.Warn("refused a request without the owner's credential", "path", r.URL.Path, "reason", reason, "uid", uid)
}

// maxSessionCookies bounds how many session cookies of one request are looked up.
const maxSessionCookies = 8

// validSession reports whether any of r's session cookies (the name carries the port) is a live
// session for subject. Any, not the first: a page on another port of the same host can add a
// cookie of that name with a narrower path, which the browser sends first.
func validSession(r *http.Request, q webauth.Querier, key seal.Key, subject string) (bool, error) {
	name := cookieName("buddi_session", r)
	tried := 0
	for _, c := range r.Cookies() {
		if c.Name != name {
			continue
		}
		if tried++; tried > maxSessionCookies {
			return false, nil // a request stuffed with cookies costs one query each: enough
		}
		ok, err := webauth.Valid(r.Context(), q, key, c.Value, webauth.PurposeSession, subject)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

const signInPage = `<!doctype html><meta charset="utf-8"><title>buddi: sign in</title>
<body style="font-family:system-ui;max-width:32rem;margin:4rem auto;line-height:1.5">
<h1>Sign in to buddi</h1><p>This dashboard needs a sign-in, on this machine as from elsewhere.
On the machine buddi runs on, run <code>buddi dashboard</code> and open the link it prints
within five minutes. The link works once; the browser then stays signed in.</p></body>`

// redeem exchanges a sign-in ticket (GET /auth?ticket=…) for an HttpOnly session cookie and
// sends the browser to the dashboard.
func (s *Server) redeem(w http.ResponseWriter, r *http.Request) {
	token, ttl, err := webauth.Redeem(r.Context(), s.deps.Pool, s.deps.Seal, r.URL.Query().Get("ticket"), webauth.PurposeSession, "")
	if err != nil {
		s.recordRefusal(r, "a used, expired or unknown sign-in ticket")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(strings.Replace(signInPage, "<h1>Sign in to buddi</h1>", "<h1>That link has been used or has expired</h1>", 1)))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName("buddi_session", r), Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil, Expires: time.Now().Add(ttl)})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// hostCheck refuses a request whose Host is not this server's: loopback names with its port,
// the listener's own address, or publicHost with its port. A page on another site that
// rebinds its own name to buddi's address reaches this port with its own name in Host (and a
// matching Origin): without this check it could read and decide approvals.
func hostCheck(addr, publicHost string, next http.Handler) http.Handler {
	_, port, _ := net.SplitHostPort(addr)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, reqPort, err := net.SplitHostPort(strings.ToLower(r.Host))
		if err != nil {
			host, reqPort = strings.ToLower(r.Host), ""
		}
		host = strings.Trim(host, "[]")
		ok := host == "127.0.0.1" || host == "localhost" || host == "::1" || strings.EqualFold(r.Host, addr) ||
			(publicHost != "" && strings.EqualFold(host, publicHost))
		if port != "" && reqPort != port {
			ok = false
		}
		if !ok {
			writeError(w, http.StatusMisdirectedRequest, "this address is not buddi's: open http://127.0.0.1:"+port)
			return
		}
		next.ServeHTTP(w, r)
	})
}
