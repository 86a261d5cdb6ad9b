package dashboard

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// loopbackOnly refuses a request whose Host is not this server's loopback address (with
// addr's port; any port when addr is empty). A page on another site that rebinds its own name
// to 127.0.0.1 reaches this port with its own name in Host (and a matching Origin): without
// this check it could read and decide approvals.
func loopbackOnly(addr string, next http.Handler) http.Handler {
	_, port, _ := net.SplitHostPort(addr)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, reqPort, err := net.SplitHostPort(strings.ToLower(r.Host))
		if err != nil {
			host, reqPort = strings.ToLower(r.Host), ""
		}
		ok := host == "127.0.0.1" || host == "localhost" || host == "::1" || strings.EqualFold(r.Host, addr)
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

// guardWrite refuses a write that a page on another origin could have sent: an Origin other
// than this server's, a cross-site fetch, or a body that is not JSON (a form post cannot send
// application/json without a preflight, and buddi answers no preflight). The dashboard's
// double-submit CSRF check joins this when the web UI lands.
func guardWrite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || u.Host != r.Host || (u.Scheme != "http" && u.Scheme != "https") {
				writeError(w, http.StatusForbidden, "this request came from another site and is refused")
				return
			}
		}
		switch r.Header.Get("Sec-Fetch-Site") {
		case "", "same-origin", "none":
		default:
			writeError(w, http.StatusForbidden, "this request came from another site and is refused")
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" && !bytes.HasPrefix([]byte(ct), []byte("application/json;")) {
			writeError(w, http.StatusUnsupportedMediaType, "send the body as application/json")
			return
		}
		next.ServeHTTP(w, r)
	})
}
