package providertest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"buddi/runtime/provider"
	"buddi/runtime/transport"
)

// The credentials the server accepts.
const (
	// APIKey is the api key both wires accept.
	APIKey = "sk-test-api-key-providertest"
	// SubscriptionToken is the Claude subscription token the Messages wire accepts.
	SubscriptionToken = "sk-ant-oat01-providertest-token"
	// ClaudeCodeIdentity is the system block a subscription-token request must open with,
	// kept here apart from the adapter's copy so that a change to either is caught.
	ClaudeCodeIdentity = "You are Claude Code, Anthropic's official CLI for Claude."
	// OAuthBeta is the anthropic-beta value a subscription-token request must carry.
	OAuthBeta = "oauth-2025-04-20"
	// AnthropicVersion is the anthropic-version the server accepts.
	AnthropicVersion = "2023-06-01"
)

// Recorded is one request the server received.
type Recorded struct {
	Wire    provider.Wire // which wire the path belongs to ("" for an unknown path)
	Method  string        // the HTTP method
	Path    string        // the URL path
	Host    string        // the Host header
	Proto   string        // "HTTP/1.1"
	Header  http.Header   // every request header
	Body    []byte        // the raw body
	Status  int           // the status the server answered with
	Refusal string        // why the strict server refused it, or "" when it was served
}

// JSON decodes the body into a generic value (nil when it is not JSON).
func (r Recorded) JSON() map[string]any {
	var v map[string]any
	if json.Unmarshal(r.Body, &v) != nil {
		return nil
	}
	return v
}

// Server is the scripted model server. Build it with [New].
type Server struct {
	// URL is the server's base URL, https://127.0.0.1:port. The Messages wire is at
	// URL+"/v1/messages", Chat Completions at URL+"/v1/chat/completions".
	URL string

	t    testing.TB
	srv  *httptest.Server
	pool *x509.CertPool
	// certDER is the server's self-signed certificate.
	certDER []byte
	addr    string
	done    chan struct{}
	mu      sync.Mutex
	queue   []Reply
	reqs    []Recorded
	seq     int
}

// New starts a server on loopback over TLS, and stops it when the test ends. At the end it
// also fails the test for a scripted reply left unused or a request that found none.
func New(t testing.TB) *Server {
	t.Helper()
	cert, pool := selfSigned(t)
	s := &Server{t: t, pool: pool, done: make(chan struct{}), certDER: cert.Certificate[0]}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}
	s.srv.StartTLS()
	s.URL = s.srv.URL
	s.addr = s.srv.Listener.Addr().String()
	t.Cleanup(func() {
		close(s.done)
		s.srv.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.queue) > 0 {
			t.Errorf("providertest: %d scripted replies were never requested", len(s.queue))
		}
		for _, r := range s.reqs {
			if r.Refusal == refusalUnscripted {
				t.Errorf("providertest: a %s request found no scripted reply", r.Wire)
			}
		}
	})
	return s
}

// CAPEM is the server's certificate in PEM: a process started with SSL_CERT_FILE naming a
// file holding it trusts the server through the system roots, as buddi serve does.
func (s *Server) CAPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.certDER})
}

// OpenAIBaseURL is the base URL to give a Chat Completions adapter for a compatible
// endpoint at this server.
func (s *Server) OpenAIBaseURL() string { return s.URL + "/v1" }

// TransportConfig returns a transport configuration that trusts the server's certificate
// (valid for 127.0.0.1, localhost, api.anthropic.com and api.openai.com) and dials every
// address to the server, so a real host name in a base URL reaches it.
func (s *Server) TransportConfig() transport.Config {
	return transport.Config{
		TLS: &tls.Config{RootCAs: s.pool, MinVersion: tls.VersionTLS12},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, s.addr)
		},
	}
}

// Script appends replies to the queue; each request that passes the strict checks takes
// the next one, whichever wire it came on.
func (s *Server) Script(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Requests returns every request received so far, refused ones included, in order.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Recorded, len(s.reqs))
	copy(out, s.reqs)
	return out
}

// Served returns the requests that passed the strict checks, in order.
func (s *Server) Served() []Recorded {
	var out []Recorded
	for _, r := range s.Requests() {
		if r.Refusal == "" {
			out = append(out, r)
		}
	}
	return out
}

const refusalUnscripted = "no scripted reply left"

// refusal is a request the strict server refuses, in the wire's error format.
type refusal struct {
	status  int
	errType string
	msg     string
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	rec := Recorded{Method: r.Method, Path: r.URL.Path, Host: r.Host, Proto: r.Proto, Header: r.Header.Clone(), Body: body}
	var check func(*http.Request, []byte) (*wireRequest, *refusal)
	switch r.URL.Path {
	case "/v1/messages":
		rec.Wire, check = provider.WireAnthropic, checkAnthropic
	case "/v1/chat/completions":
		rec.Wire, check = provider.WireOpenAI, checkOpenAI
	default:
		rec.Status, rec.Refusal = http.StatusNotFound, "unknown path "+r.URL.Path
		s.record(rec)
		http.NotFound(w, r)
		return
	}
	req, ref := (*wireRequest)(nil), (*refusal)(nil)
	if r.Method != http.MethodPost {
		ref = &refusal{http.StatusMethodNotAllowed, "invalid_request_error", "method not allowed"}
	} else {
		req, ref = check(r, body)
	}
	if ref != nil {
		rec.Status, rec.Refusal = ref.status, ref.msg
		s.record(rec)
		writeError(w, rec.Wire, ref.status, ref.errType, ref.msg, nil)
		return
	}

	s.mu.Lock()
	if len(s.queue) == 0 {
		s.mu.Unlock()
		rec.Status, rec.Refusal = http.StatusInternalServerError, refusalUnscripted
		s.record(rec)
		writeError(w, rec.Wire, http.StatusInternalServerError, "", "providertest: "+refusalUnscripted, nil)
		return
	}
	reply := s.queue[0]
	s.queue = s.queue[1:]
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	if reply.From != nil {
		reply = reply.From(body)
	}

	rec.Status = http.StatusOK
	if reply.Status != 0 && reply.Status != http.StatusOK {
		rec.Status = reply.Status
	}
	s.record(rec)
	switch {
	case reply.Stall:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case rec.Status != http.StatusOK:
		writeError(w, rec.Wire, reply.Status, reply.ErrorType, reply.ErrorMessage, reply.Header)
	case rec.Wire == provider.WireAnthropic:
		streamAnthropic(w, req, reply, seq)
	default:
		streamOpenAI(w, req, reply, seq)
	}
}

func (s *Server) record(r Recorded) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
}

// wireRequest is what the stream writers need of a request that passed the checks.
type wireRequest struct {
	model        string
	includeUsage bool
}

// writeError writes an error response in the wire's format.
func writeError(w http.ResponseWriter, wire provider.Wire, status int, errType, msg string, header http.Header) {
	for k, vs := range header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	var body any
	if wire == provider.WireOpenAI {
		if errType == "" {
			errType = openAIErrorType(status)
		}
		e := map[string]any{"message": msg, "type": errType, "param": nil, "code": nil}
		if status == http.StatusUnauthorized {
			e["code"] = "invalid_api_key"
		}
		if status == http.StatusTooManyRequests {
			e["code"] = "rate_limit_exceeded"
		}
		body = map[string]any{"error": e}
	} else {
		if errType == "" {
			errType = anthropicErrorType(status)
		}
		w.Header().Set("Request-Id", "req_providertest")
		body = map[string]any{"type": "error", "error": map[string]any{"type": errType, "message": msg}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func openAIErrorType(status int) string {
	switch {
	case status == 429:
		return "requests"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// sse writes server-sent events and can drop the connection after a number of deltas.
type sse struct {
	w         http.ResponseWriter
	deltas    int
	dropAfter int
}

func newSSE(w http.ResponseWriter, reply Reply) *sse {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, dropAfter: reply.DropAfter}
}

// event writes one event; name is empty on the OpenAI wire.
func (s *sse) event(name string, data any) {
	var b bytes.Buffer
	if name != "" {
		fmt.Fprintf(&b, "event: %s\n", name)
	}
	switch d := data.(type) {
	case string:
		fmt.Fprintf(&b, "data: %s\n\n", d)
	default:
		j, _ := json.Marshal(d)
		fmt.Fprintf(&b, "data: %s\n\n", j)
	}
	s.w.Write(b.Bytes())
	s.w.(http.Flusher).Flush()
}

// delta writes an event that carries model output, then drops the connection if the
// script says so.
func (s *sse) delta(name string, data any) {
	s.event(name, data)
	s.deltas++
	if s.dropAfter > 0 && s.deltas >= s.dropAfter {
		s.drop()
	}
}

// drop ends the handler without finishing the response: the server closes the connection
// and the client reads an unterminated chunked body.
func (s *sse) drop() {
	s.w.(http.Flusher).Flush()
	panic(http.ErrAbortHandler)
}

// chunks cuts s into pieces of at most n bytes (at least one piece).
func chunks(s string, n int) []string {
	if s == "" {
		return []string{""}
	}
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// selfSigned makes a certificate for the names the server answers to, and a pool that
// trusts it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "providertest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost", "api.anthropic.com", "api.openai.com"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// bearer returns the token of an Authorization: Bearer header, or "".
func bearer(h http.Header) (string, bool) {
	v := h.Get("Authorization")
	tok, ok := strings.CutPrefix(v, "Bearer ")
	return tok, ok
}
