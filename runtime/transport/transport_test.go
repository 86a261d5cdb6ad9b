package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// connCounter counts the connections a test server accepted.
type connCounter struct{ n atomic.Int32 }

func (c *connCounter) track(srv *httptest.Server) {
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.n.Add(1)
		}
	}
}

func post(t *testing.T, client *http.Client, url, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return client.Do(req)
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return string(b)
}

func TestHTTP11WithoutKeepAlive(t *testing.T) {
	t.Parallel()
	var conns connCounter
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 1 || r.ProtoMinor != 1 {
			t.Errorf("proto = %s, want HTTP/1.1", r.Proto)
		}
		if !r.Close {
			t.Errorf("request does not ask to close the connection (keep-alive is on)")
		}
		io.WriteString(w, "ok")
	}))
	srv.EnableHTTP2 = true // the server offers h2; the transport must not take it
	conns.track(srv)
	srv.StartTLS()
	defer srv.Close()

	tr := New(Config{TLS: srv.Client().Transport.(*http.Transport).TLSClientConfig})
	client := tr.Client()
	for range 2 {
		resp, err := post(t, client, srv.URL, "hi")
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, resp); got != "ok" {
			t.Errorf("body = %q, want ok", got)
		}
		if resp.ProtoMajor != 1 {
			t.Errorf("response proto = %s, want HTTP/1.1", resp.Proto)
		}
	}
	if got := conns.n.Load(); got != 2 {
		t.Errorf("connections = %d, want 2 (one per request, nothing held)", got)
	}
}

func TestByteLimit(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/declared" {
			w.Header().Set("Content-Length", "5000")
			w.Write(bytes.Repeat([]byte("x"), 5000))
			return
		}
		for range 5 { // chunked: no length declared up front
			w.Write(bytes.Repeat([]byte("x"), 400))
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	client := New(Config{MaxResponseBytes: 1000}).Client()

	t.Run("declared", func(t *testing.T) {
		_, err := post(t, client, srv.URL+"/declared", "")
		var tooLarge *TooLargeError
		if !errors.As(err, &tooLarge) || tooLarge.Limit != 1000 || tooLarge.Declared != 5000 {
			t.Fatalf("err = %v, want a TooLargeError of limit 1000, declared 5000", err)
		}
	})
	t.Run("streamed", func(t *testing.T) {
		resp, err := post(t, client, srv.URL+"/streamed", "")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		var tooLarge *TooLargeError
		if !errors.As(err, &tooLarge) {
			t.Fatalf("err = %v, want a TooLargeError", err)
		}
		if len(b) != 1000 {
			t.Errorf("read %d bytes before the error, want exactly the limit, 1000", len(b))
		}
	})
}

func TestReadIdleTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		select { // then silence, as a half-open connection would be
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	client := New(Config{ReadIdleTimeout: 50 * time.Millisecond}).Client()
	resp, err := post(t, client, srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	var te *TimeoutError
	if !errors.As(err, &te) || te.After != 50*time.Millisecond {
		t.Fatalf("err = %v, want a TimeoutError after 50ms", err)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("err is not a net.Error timeout")
	}
	if string(b) != "first" {
		t.Errorf("read %q before the timeout, want %q", b, "first")
	}
}

func TestShouldRetry(t *testing.T) {
	t.Parallel()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	eof := io.EOF
	tests := []struct {
		name  string
		ctx   context.Context
		state AttemptState
		err   error
		want  bool
	}{
		{"reused idle socket, no byte", context.Background(), AttemptState{Reused: true, WasIdle: true}, eof, true},
		{"fresh socket", context.Background(), AttemptState{}, eof, false},
		{"reused but not idle", context.Background(), AttemptState{Reused: true}, eof, false},
		{"a response byte arrived", context.Background(), AttemptState{Reused: true, WasIdle: true, GotFirstByte: true}, eof, false},
		{"aborted by the caller", canceled, AttemptState{Reused: true, WasIdle: true}, context.Canceled, false},
		{"no error", context.Background(), AttemptState{Reused: true, WasIdle: true}, nil, false},
		{"too large", context.Background(), AttemptState{Reused: true, WasIdle: true}, &TooLargeError{Limit: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ShouldRetry(tt.ctx, tt.state, tt.err); got != tt.want {
				t.Errorf("ShouldRetry = %v, want %v", got, tt.want)
			}
		})
	}
}

// closingServer answers request numbers in answer and closes the connection of every other
// request without a byte of response.
type closingServer struct {
	*httptest.Server
	conns    connCounter
	mu       sync.Mutex
	requests []string // the body of every request received, in order
	answer   map[int]bool
	partial  map[int]bool // write the start of a status line, then close
}

func newClosingServer(t *testing.T, answer, partial map[int]bool) *closingServer {
	cs := &closingServer{answer: answer, partial: partial}
	cs.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		cs.mu.Lock()
		cs.requests = append(cs.requests, string(b))
		n := len(cs.requests)
		cs.mu.Unlock()
		if cs.answer[n] {
			io.WriteString(w, "answer "+string(b))
			return
		}
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		if cs.partial[n] {
			buf.WriteString("HTTP/1.1 200")
			buf.Flush()
		}
		conn.Close()
	}))
	cs.conns.track(cs.Server)
	cs.Start()
	t.Cleanup(cs.Close)
	return cs
}

func (cs *closingServer) received() []string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return append([]string(nil), cs.requests...)
}

func TestIdleSocketRetry(t *testing.T) {
	t.Parallel()
	t.Run("fresh socket closed without an answer is not retried", func(t *testing.T) {
		t.Parallel()
		srv := newClosingServer(t, map[int]bool{2: true}, nil)
		client := New(Config{}).Client() // keep-alive off: every socket is fresh
		if _, err := post(t, client, srv.URL, "one"); err == nil {
			t.Fatal("request on a closed connection succeeded")
		}
		if got := srv.received(); len(got) != 1 {
			t.Errorf("server received %v, want one request (no retry on a fresh socket)", got)
		}
	})
	t.Run("reused idle socket closed without an answer is retried once", func(t *testing.T) {
		t.Parallel()
		srv := newClosingServer(t, map[int]bool{1: true, 3: true}, nil)
		client := newTransport(Config{}, true).Client()
		resp, err := post(t, client, srv.URL, "one")
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp) // the socket goes back to the pool, idle
		resp, err = post(t, client, srv.URL, "two")
		if err != nil {
			t.Fatalf("second request: %v (want the transport's single retry to succeed)", err)
		}
		if got := readAll(t, resp); got != "answer two" {
			t.Errorf("body = %q, want %q", got, "answer two")
		}
		if got := srv.received(); strings.Join(got, ",") != "one,two,two" {
			t.Errorf("server received %v, want [one two two]", got)
		}
		if got := srv.conns.n.Load(); got != 2 {
			t.Errorf("connections = %d, want 2", got)
		}
	})
	t.Run("retried at most once", func(t *testing.T) {
		t.Parallel()
		srv := newClosingServer(t, map[int]bool{1: true, 2: true}, nil)
		client := newTransport(Config{}, true).Client()
		for _, body := range []string{"one", "two"} { // two sockets in the pool? only one is kept
			resp, err := post(t, client, srv.URL, body)
			if err != nil {
				t.Fatal(err)
			}
			readAll(t, resp)
		}
		if _, err := post(t, client, srv.URL, "three"); err == nil {
			t.Fatal("request succeeded; the server answers nothing from the third on")
		}
		if got := srv.received(); strings.Join(got, ",") != "one,two,three,three" {
			t.Errorf("server received %v, want [one two three three]", got)
		}
	})
	t.Run("a response byte received is never retried", func(t *testing.T) {
		t.Parallel()
		srv := newClosingServer(t, map[int]bool{1: true, 3: true}, map[int]bool{2: true})
		client := newTransport(Config{}, true).Client()
		resp, err := post(t, client, srv.URL, "one")
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		if _, err := post(t, client, srv.URL, "two"); err == nil {
			t.Fatal("request succeeded on a half answer")
		}
		if got := srv.received(); strings.Join(got, ",") != "one,two" {
			t.Errorf("server received %v, want [one two]", got)
		}
	})
}

func TestLookupIsTheResolver(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Host)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	refused := errors.New("address guard: destination refused")
	var asked []string
	var mu sync.Mutex
	client := New(Config{Lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
		mu.Lock()
		asked = append(asked, host)
		mu.Unlock()
		if host == "buddi.test" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, refused
	}}).Client()

	resp, err := post(t, client, "http://buddi.test:"+port+"/", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); got != "buddi.test:"+port {
		t.Errorf("host = %q", got)
	}
	if _, err := post(t, client, "http://elsewhere.test:"+port+"/", ""); !errors.Is(err, refused) {
		t.Errorf("err = %v, want the guard's refusal", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(asked, ",") != "buddi.test,elsewhere.test" {
		t.Errorf("lookups = %v", asked)
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	resp, err := post(t, New(Config{}).Client(), srv.URL, "x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || hits.Load() != 1 {
		t.Errorf("status %d after %d requests, want the 307 itself after 1", resp.StatusCode, hits.Load())
	}
}
