package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

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
func guardWrite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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

// gate applies the access rules to every request: the Host check, the CSRF cookie, and, off
// loopback, a session (except for the sign-in exchange itself).
func (s *Server) gate(next http.Handler) http.Handler {
	return hostCheck(s.deps.Addr, s.deps.PublicHost, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		csrfCookie(w, r)
		if s.deps.Remote && r.URL.Path != "/auth" {
			ok, err := validSession(r, s.deps.Pool, "")
			if err != nil {
				writeError(w, http.StatusServiceUnavailable, "the session could not be checked: the database is not answering")
				return
			}
			if !ok {
				if strings.HasPrefix(r.URL.Path, "/api/") {
					writeError(w, http.StatusUnauthorized, "sign in first: run `buddi dashboard` where buddi runs and open the link it prints")
					return
				}
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(signInPage))
				return
			}
		}
		next.ServeHTTP(w, r)
	}))
}

// validSession reports whether any of r's session cookies (the name carries the port) is a live
// session for subject. Any, not the first: a page on another port of the same host can add a
// cookie of that name with a narrower path, which the browser sends first.
func validSession(r *http.Request, q webauth.Querier, subject string) (bool, error) {
	name := cookieName("buddi_session", r)
	for _, c := range r.Cookies() {
		if c.Name != name {
			continue
		}
		ok, err := webauth.Valid(r.Context(), q, c.Value, webauth.PurposeSession, subject)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

const signInPage = `<!doctype html><meta charset="utf-8"><title>buddi: sign in</title>
<body style="font-family:system-ui;max-width:32rem;margin:4rem auto;line-height:1.5">
<h1>Sign in to buddi</h1><p>This dashboard is reached over the network, so it needs a sign-in.
On the machine buddi runs on, run <code>buddi dashboard</code> and open the link it prints
within five minutes. The link works once.</p></body>`

// redeem exchanges a sign-in ticket (GET /auth?ticket=…) for an HttpOnly session cookie and
// sends the browser to the dashboard.
func (s *Server) redeem(w http.ResponseWriter, r *http.Request) {
	token, ttl, err := webauth.Redeem(r.Context(), s.deps.Pool, r.URL.Query().Get("ticket"), webauth.PurposeSession, "")
	if err != nil {
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
