package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"sync/atomic"
	"time"
)

// Defaults used where a [Config] field is zero.
const (
	DefaultDialTimeout            = 10 * time.Second
	DefaultTLSHandshakeTimeout    = 10 * time.Second
	DefaultResponseHeaderTimeout  = 2 * time.Minute
	DefaultReadIdleTimeout        = 2 * time.Minute
	DefaultMaxResponseBytes       = 32 << 20
	DefaultMaxResponseHeaderBytes = 1 << 20
)

// Config configures a [Transport]. The zero value works: every zero field takes the default
// named on it. Nothing is read from the environment (no HTTP_PROXY, no SSL_CERT_FILE beyond
// what crypto/x509 itself reads for the system roots).
type Config struct {
	// DialTimeout bounds one TCP connect. Default [DefaultDialTimeout].
	DialTimeout time.Duration
	// TLSHandshakeTimeout bounds the TLS handshake. Default [DefaultTLSHandshakeTimeout].
	TLSHandshakeTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait, after the request is written, for the response
	// headers. Default [DefaultResponseHeaderTimeout].
	ResponseHeaderTimeout time.Duration
	// ReadIdleTimeout is the longest silence allowed between two reads of a response body
	// that return bytes; a body that stays silent longer fails with a [*TimeoutError]. A
	// long poll sets it above its poll time. Default [DefaultReadIdleTimeout].
	ReadIdleTimeout time.Duration
	// MaxResponseBytes is the most bytes of one response body (after decompression) a caller
	// may read; the read past it fails with a [*TooLargeError]. Default
	// [DefaultMaxResponseBytes].
	MaxResponseBytes int64
	// MaxResponseHeaderBytes bounds the response headers. Default
	// [DefaultMaxResponseHeaderBytes].
	MaxResponseHeaderBytes int64
	// Lookup resolves a host name to the addresses to dial, in order. It is where an address
	// guard refuses a destination: an error fails the request before any socket opens. A
	// literal IP address is passed through it too. Default: the system resolver.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// DialContext, when set, replaces the dialer (and so Lookup) entirely. Tests use it to
	// send a real host name to a loopback server.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLS is the client TLS configuration; it is cloned and its NextProtos forced to
	// HTTP/1.1. Default: the system roots, TLS 1.2 at least.
	TLS *tls.Config
}

func (c Config) withDefaults() Config {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&c.DialTimeout, DefaultDialTimeout)
	set(&c.TLSHandshakeTimeout, DefaultTLSHandshakeTimeout)
	set(&c.ResponseHeaderTimeout, DefaultResponseHeaderTimeout)
	set(&c.ReadIdleTimeout, DefaultReadIdleTimeout)
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.MaxResponseHeaderBytes <= 0 {
		c.MaxResponseHeaderBytes = DefaultMaxResponseHeaderBytes
	}
	return c
}

// Transport is the runtime's [http.RoundTripper]. Build it with [New]; it is safe for
// concurrent use.
type Transport struct {
	cfg  Config
	base *http.Transport
}

var _ http.RoundTripper = (*Transport)(nil)

// New returns a Transport for cfg.
func New(cfg Config) *Transport {
	return newTransport(cfg, false)
}

// newTransport builds the transport; keepAlive is for this package's tests only, which need
// a reused idle socket to exercise the retry rule.
func newTransport(cfg Config, keepAlive bool) *Transport {
	cfg = cfg.withDefaults()
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.TLS != nil {
		tlsCfg = cfg.TLS.Clone()
	}
	tlsCfg.NextProtos = []string{"http/1.1"}
	dial := cfg.DialContext
	if dial == nil {
		dial = (&dialer{timeout: cfg.DialTimeout, lookup: cfg.Lookup}).DialContext
	}
	base := &http.Transport{
		Proxy:                  nil, // no ambient proxy
		DialContext:            dial,
		TLSClientConfig:        tlsCfg,
		TLSHandshakeTimeout:    cfg.TLSHandshakeTimeout,
		ResponseHeaderTimeout:  cfg.ResponseHeaderTimeout,
		MaxResponseHeaderBytes: cfg.MaxResponseHeaderBytes,
		DisableKeepAlives:      !keepAlive,
		ForceAttemptHTTP2:      false,
		// A non-nil empty map turns HTTP/2 off.
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
	if keepAlive {
		base.MaxIdleConnsPerHost = 1
		base.IdleConnTimeout = time.Minute
	}
	return &Transport{cfg: cfg, base: base}
}

// Client returns an [http.Client] over t that follows no redirect (the redirect response is
// returned as it is) and has no overall timeout: a stream's length is bounded by the
// caller's context and by [Config.ReadIdleTimeout].
func (t *Transport) Client() *http.Client {
	return &http.Client{
		Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// CloseIdleConnections closes any idle connection (there are none with keep-alive off).
func (t *Transport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// RoundTrip sends req once, and a second time only when [ShouldRetry] allows it.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.attempt(req)
	if err == nil {
		return resp, nil
	}
	var failed *attemptError
	if !errors.As(err, &failed) || !ShouldRetry(req.Context(), failed.state, failed.err) {
		return nil, unwrapAttempt(err)
	}
	retry, rerr := rewind(req)
	if rerr != nil {
		return nil, failed.err
	}
	resp, err = t.attempt(retry)
	return resp, unwrapAttempt(err)
}

// AttemptState is what the transport saw of one attempt's socket, through httptrace.
type AttemptState struct {
	Reused       bool // the socket had carried an earlier request
	WasIdle      bool // the socket sat idle in the pool before this request took it
	GotFirstByte bool // at least one byte of the response arrived
}

// ShouldRetry is the transport's single retry rule: retry once when the attempt failed on a
// reused socket taken idle from the pool that received no response byte, and the caller has
// not given up (an aborted request is never retried). Anything else — a fresh socket, a
// response that had begun — is returned to the caller, since what the far end did with the
// request cannot be known.
func ShouldRetry(ctx context.Context, s AttemptState, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var tooLarge *TooLargeError
	if errors.As(err, &tooLarge) {
		return false
	}
	return s.Reused && s.WasIdle && !s.GotFirstByte
}

// attemptError carries an attempt's state up to RoundTrip.
type attemptError struct {
	state AttemptState
	err   error
}

func (e *attemptError) Error() string { return e.err.Error() }
func (e *attemptError) Unwrap() error { return e.err }

func unwrapAttempt(err error) error {
	var a *attemptError
	if errors.As(err, &a) {
		return a.err
	}
	return err
}

// rewind returns a copy of req whose body can be sent again.
func rewind(req *http.Request) (*http.Request, error) {
	out := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return out, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("transport: request body cannot be replayed")
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	out.Body = body
	return out, nil
}

// attempt sends req once through the base transport, watching its socket and bounding its
// body.
func (t *Transport) attempt(req *http.Request) (*http.Response, error) {
	var reused, wasIdle, gotByte atomic.Bool
	trace := &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			reused.Store(info.Reused)
			wasIdle.Store(info.WasIdle)
		},
		GotFirstResponseByte: func() { gotByte.Store(true) },
	}
	ctx, cancel := context.WithCancelCause(httptrace.WithClientTrace(req.Context(), trace))
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel(nil)
		state := AttemptState{Reused: reused.Load(), WasIdle: wasIdle.Load(), GotFirstByte: gotByte.Load()}
		return nil, &attemptError{state: state, err: timeoutOr(err)}
	}
	if resp.ContentLength > t.cfg.MaxResponseBytes {
		resp.Body.Close()
		cancel(nil)
		return nil, &TooLargeError{Limit: t.cfg.MaxResponseBytes, Declared: resp.ContentLength}
	}
	resp.Body = newBody(ctx, resp.Body, cancel, t.cfg.MaxResponseBytes, t.cfg.ReadIdleTimeout)
	return resp, nil
}

// timeoutOr turns the base transport's header timeout into a [*TimeoutError].
func timeoutOr(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, context.DeadlineExceeded) {
		return &TimeoutError{Phase: "connect or response headers", Err: err}
	}
	return err
}

// TooLargeError reports a response body longer than [Config.MaxResponseBytes].
type TooLargeError struct {
	Limit    int64 // the configured limit in bytes
	Declared int64 // the Content-Length the server declared, or 0 when it declared none
}

// Error implements error.
func (e *TooLargeError) Error() string {
	if e.Declared > 0 {
		return fmt.Sprintf("transport: response of %d bytes exceeds the limit of %d bytes", e.Declared, e.Limit)
	}
	return fmt.Sprintf("transport: response exceeds the limit of %d bytes", e.Limit)
}

// TimeoutError reports a timeout of the transport's own (not the caller's context). It is
// a [net.Error] whose Timeout is true.
type TimeoutError struct {
	Phase string        // what was being waited for
	After time.Duration // the limit that ran out, when the transport knows it
	Err   error         // the underlying error, if any
}

// Error implements error.
func (e *TimeoutError) Error() string {
	msg := "transport: timeout waiting for " + e.Phase
	if e.After > 0 {
		msg += fmt.Sprintf(" (%s)", e.After)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *TimeoutError) Unwrap() error { return e.Err }

// Timeout reports true: this is a timeout.
func (e *TimeoutError) Timeout() bool { return true }

// Temporary reports false; it is part of [net.Error].
func (e *TimeoutError) Temporary() bool { return false }

var _ net.Error = (*TimeoutError)(nil)

// body bounds a response body by size and by the silence between reads.
type body struct {
	rc     io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	limit  int64
	read   atomic.Int64
	idle   time.Duration
	timer  *time.Timer
}

func newBody(ctx context.Context, rc io.ReadCloser, cancel context.CancelCauseFunc, limit int64, idle time.Duration) *body {
	b := &body{rc: rc, ctx: ctx, cancel: cancel, limit: limit, idle: idle}
	b.timer = time.AfterFunc(idle, func() {
		cancel(&TimeoutError{Phase: "the next bytes of the response body", After: idle})
	})
	return b
}

// Read reads from the body, failing past the byte limit or after the idle timeout.
func (b *body) Read(p []byte) (int, error) {
	remaining := b.limit - b.read.Load()
	if remaining < 0 {
		return 0, &TooLargeError{Limit: b.limit}
	}
	if int64(len(p)) > remaining+1 {
		p = p[:remaining+1]
	}
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	total := b.read.Add(int64(n))
	if total > b.limit {
		n -= int(total - b.limit)
		b.cancel(nil)
		return n, &TooLargeError{Limit: b.limit}
	}
	if err != nil && err != io.EOF {
		if cause := context.Cause(b.ctx); cause != nil {
			var te *TimeoutError
			if errors.As(cause, &te) {
				return n, te
			}
		}
	}
	return n, err
}

// Close stops the idle timer, releases the request's context and closes the body.
func (b *body) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}

// dialer resolves through the configured lookup and dials each address in turn.
type dialer struct {
	timeout time.Duration
	lookup  func(ctx context.Context, host string) ([]netip.Addr, error)
}

// DialContext dials addr ("host:port") through the lookup.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	lookup := d.lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			if ip, err := netip.ParseAddr(host); err == nil {
				return []netip.Addr{ip}, nil
			}
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	addrs, err := lookup(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("transport: look up %q: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("transport: look up %q: no address", host)
	}
	nd := &net.Dialer{Timeout: d.timeout}
	var errs []error
	for _, ip := range addrs {
		conn, err := nd.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}
