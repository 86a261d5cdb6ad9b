// Package fetchsite tells whether a browser's request that can change something was made by a
// page of the origin it is sent to. Where a credential travels with every request the browser
// makes (a tailnet identity, a SameSite=Lax cookie that pages on other ports of the same host
// also get sent), that is what keeps another page from acting in the owner's name.
//
// The rule, for a write (every method but GET, HEAD and OPTIONS, and every websocket): the
// browser's Sec-Fetch-Site must say same-origin, or none (the owner's own action, such as a
// bookmark); a browser sends that header only to secure origins (HTTPS, loopback), so where it
// is missing the Origin header, which browsers send with every write and every websocket,
// must name the request's own origin. A write that says neither is refused: no browser sends
// one, and a client that is not a browser can send the Origin it means. When both headers are
// present both must agree. A read must not name another origin either, unless it is a
// navigation (a link followed, a frame).
package fetchsite

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// ErrUnsaid refuses a write that names neither the site nor the page it came from.
var ErrUnsaid = errors.New("this request says neither which page sent it (Origin) nor from which site (Sec-Fetch-Site), so it is refused: send it from the app's own page, or set Origin to the address it is sent to")

// ErrElsewhere refuses a request another page made (a write, or a read that is not a navigation).
var ErrElsewhere = errors.New("a page of another site or another port sent this request on your behalf, and it is refused: open the page by its own address")

// IsWrite reports whether r can change something: every method but GET, HEAD and OPTIONS,
// and a websocket handshake (a GET that opens a channel both ways).
func IsWrite(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return IsUpgrade(r)
	}
	return true
}

// IsUpgrade reports whether r asks to switch protocols (a websocket), whatever the protocol.
func IsUpgrade(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" {
		return true
	}
	for _, v := range r.Header.Values("Connection") {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "upgrade") {
				return true
			}
		}
	}
	return false
}

// Check returns nil for a request a page may make of r's origin, and ErrUnsaid or
// ErrElsewhere for one it refuses:
//   - a write (IsWrite) must come from a page of r's own origin, or from the browser's user:
//     Sec-Fetch-Site same-origin or none; without that header (browsers send it only to secure
//     origins) an Origin naming r's own origin; a write with neither is ErrUnsaid;
//   - a read gets through from r's own origin, from the browser's user, from a top-level
//     navigation or a frame's (a link followed, the dashboard framing a preview), and from a
//     request that names no site and no foreign Origin (over plain HTTP a browser's read names
//     neither, and a read another site makes that way cannot see what it gets);
//   - an Origin that is present must be r's own, whatever Sec-Fetch-Site says.
func Check(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin != "" && !own(origin, r) {
		return ErrElsewhere
	}
	site := r.Header.Get("Sec-Fetch-Site")
	switch {
	case site == "same-origin" || site == "none":
		return nil
	case site == "" && IsWrite(r) && origin == "":
		return ErrUnsaid
	case site == "":
		return nil // a write whose Origin is r's own, or a read that names no other page
	case !IsWrite(r) && r.Method == http.MethodGet && r.Header.Get("Sec-Fetch-Mode") == "navigate":
		return nil
	default:
		return ErrElsewhere
	}
}

// own reports whether origin is r's own: the scheme r arrived on and the Host it names.
func own(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Host == "" {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return strings.EqualFold(u.Scheme, scheme) && strings.EqualFold(u.Host, r.Host)
}

// Refuse answers a refused write: 403 and the sentence, as plain text.
func Refuse(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte(err.Error() + "\n"))
}
