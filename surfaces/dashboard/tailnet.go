package dashboard

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"buddi/surfaces/webauth"
	"buddi/tailnet"
	"buddi/tailnet/fetchsite"
)

// Tailnet is what the dashboard needs to answer on the tailnet node.
type Tailnet struct {
	// Gate checks the Host against the node's names, identifies the caller and refuses anyone
	// but the owner's login.
	Gate *tailnet.Gate
}

// tailnetSubject is the session subject of a tailnet login: sessions opened for one login
// are not another's.
func tailnetSubject(login string) string { return "tailnet:" + login }

// tailnetGate applies the access rules to a request that arrived over the tailnet: the Host
// must be the node's; the caller's tailnet login (WhoIs) must be the owner's, or the request
// is refused with a 403 and an event, and so is every request before an owner login is set,
// except the ticket redemption that pins it. The owner's first request gets a session without
// a sign-in step; writes still need that session cookie, the CSRF token and buddi's Origin.
// Because the identity travels with whatever the owner's browser sends, every request also
// passes fetchsite.Check: a write or a websocket that does not say it came from the
// dashboard's own page (Sec-Fetch-Site, or Origin where a browser sends no Sec-Fetch-Site) is
// refused, and so is a read another page made, except a navigation.
func (s *Server) tailnetGate(next http.Handler) http.Handler {
	t := s.deps.Tailnet
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := t.Gate.Check(r)
		if v.Owner == "" && v.CanBeOwner() && r.URL.Path == "/auth" && r.Method == http.MethodGet {
			s.redeemTailnet(w, r, v)
			return
		}
		if !v.IsOwner() {
			t.Gate.Refuse(w, r, v, "dashboard")
			return
		}
		if r.URL.Path == "/auth" { // already the owner: the ticket is not needed, nor spent
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		// The owner's identity rides on every request the owner's browser makes, whichever page
		// made it: a write or a websocket must come from the dashboard's own page, and a read
		// from it or a navigation (fetchsite's rule), before any session is opened for it.
		if err := fetchsite.Check(r); err != nil {
			writeError(w, http.StatusForbidden, err.Error())
			return
		}
		csrfCookie(w, r)
		subject := tailnetSubject(v.Caller.Login)
		ok, err := validSession(r, s.deps.Pool, s.deps.Seal, subject)
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, "the session could not be checked: the database is not answering")
			return
		}
		if !ok {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				writeError(w, http.StatusUnauthorized, "this page's session has ended: reload the page")
				return
			}
			// A session is opened only for the owner's own navigation or the page's own
			// requests: an image another site embeds must not open sessions.
			switch r.Header.Get("Sec-Fetch-Site") {
			case "", "none", "same-origin":
			default:
				writeError(w, http.StatusUnauthorized, "open the dashboard by its own address")
				return
			}
			if !s.openTailnetSession(w, r, subject) {
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// openTailnetSession opens a session for the owner's login and sets its cookie on the
// response (and on r, for the handler that follows).
func (s *Server) openTailnetSession(w http.ResponseWriter, r *http.Request, subject string) bool {
	token, ttl, err := webauth.Open(r.Context(), s.deps.Pool, s.deps.Seal, webauth.PurposeSession, subject)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "a session could not be opened: the database is not answering")
		return false
	}
	name := cookieName("buddi_session", r)
	http.SetCookie(w, &http.Cookie{Name: name, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil, Expires: time.Now().Add(ttl)})
	r.AddCookie(&http.Cookie{Name: name, Value: token})
	return true
}

// redeemTailnet spends a sign-in ticket from `buddi dashboard` over the tailnet while no
// owner login is set: the caller's login becomes the owner's (the first to redeem one), and
// gets a session.
func (s *Server) redeemTailnet(w http.ResponseWriter, r *http.Request, v tailnet.Verdict) {
	// The ticket is spent and the login pinned together: neither happens without the other.
	tx, err := s.deps.Pool.Begin(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "the sign-in could not be checked: the database is not answering")
		return
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if err := webauth.Use(r.Context(), tx, s.deps.Seal, r.URL.Query().Get("ticket"), webauth.PurposeSession, webauth.SubjectTailnet); err != nil {
		if !errors.Is(err, webauth.ErrInvalid) {
			writeError(w, http.StatusServiceUnavailable, "the sign-in could not be checked: the database is not answering")
			return
		}
		v.BadTicket = true
		s.deps.Tailnet.Gate.Refuse(w, r, v, "dashboard")
		return
	}
	owner, err := tailnet.PinOwner(r.Context(), tx, s.deps.Seal, v.Caller.Login)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "the owner's login could not be saved: the database is not answering")
		return
	}
	if !strings.EqualFold(owner, v.Caller.Login) { // another login was pinned in the meantime
		v.Owner = owner
		s.deps.Tailnet.Gate.Refuse(w, r, v, "dashboard")
		return
	}
	if err := tx.Commit(r.Context()); err != nil {
		writeError(w, http.StatusServiceUnavailable, "the owner's login could not be saved: the database is not answering")
		return
	}
	s.log.Info("the owner's tailnet login is pinned", "login", owner, "node", v.Caller.Node)
	csrfCookie(w, r)
	if !s.openTailnetSession(w, r, tailnetSubject(owner)) {
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
