package email

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"buddi/internal/mailtest"
)

// recorder is a loopback TCP relay in front of a real server that keeps every byte the
// client sent, so a test can say what went over the wire in the clear.
type recorder struct {
	addr *net.TCPAddr

	mu     sync.Mutex
	sent   strings.Builder // everything clients sent, all connections together
	closed chan struct{}   // one value per connection whose client side has ended
}

func newRecorder(t *testing.T, upstream string) *recorder {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{addr: l.Addr().(*net.TCPAddr), closed: make(chan struct{}, 16)}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := l.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", upstream)
			if err != nil {
				client.Close()
				r.closed <- struct{}{}
				continue
			}
			wg.Add(2)
			go func() { // server to client, as is
				defer wg.Done()
				_, _ = io.Copy(client, server)
				client.Close()
			}()
			go func() { // client to server, recorded
				defer wg.Done()
				buf := make([]byte, 4096)
				for {
					n, err := client.Read(buf)
					if n > 0 {
						r.mu.Lock()
						r.sent.Write(buf[:n])
						r.mu.Unlock()
						if _, werr := server.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				server.Close()
				r.closed <- struct{}{}
			}()
		}
	}()
	return r
}

// waitClosed waits until the client side of one more connection has ended, so that
// everything it sent is recorded.
func (r *recorder) waitClosed(t *testing.T) {
	t.Helper()
	select {
	case <-r.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the client's connection did not end within 10s")
	}
}

func (r *recorder) clientSent() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent.String()
}

// TestIMAPStartTLSRefusedWhenNotOffered: an account in starttls mode against a server that
// offers no STARTTLS (the test Dovecot runs with ssl = no) is refused by Test and by Poll in
// one sentence naming STARTTLS, before any login: the server never receives LOGIN or the
// password. The poll's refusal is kept as the account's last error.
func TestIMAPStartTLSRefusedWhenNotOffered(t *testing.T) {
	f := newFixture(t)
	rec := newRecorder(t, f.srv.Addr())
	a := f.acct
	a.IMAPPort, a.IMAPTLS = rec.addr.Port, StartTLS

	check := func(what string, err error) {
		t.Helper()
		oneSentence(t, err)
		s := err.Error()
		if !strings.Contains(s, "does not offer STARTTLS") || !strings.Contains(s, rec.addr.String()) || strings.Contains(s, mailtest.Password) {
			t.Fatalf("%s: err = %q, want one sentence saying the server at %s does not offer STARTTLS", what, s, rec.addr)
		}
		rec.waitClosed(t)
		sent := rec.clientSent()
		if !strings.Contains(sent, "STARTTLS") {
			t.Fatalf("%s: the client sent %q, want a STARTTLS command", what, sent)
		}
		if strings.Contains(strings.ToUpper(sent), "LOGIN") || strings.Contains(strings.ToUpper(sent), "AUTHENTICATE") || strings.Contains(sent, mailtest.Password) {
			t.Fatalf("%s: the client sent %q in the clear, want no login and no password", what, sent)
		}
	}

	check("Test", f.poller.Test(context.Background(), a))
	_, err := f.poller.Poll(context.Background(), a)
	check("Poll", err)
	stored, serr := f.store.Account(context.Background(), a.Name)
	if serr != nil || !strings.Contains(stored.LastError, "does not offer STARTTLS") {
		t.Fatalf("last error = %q (%v), want the STARTTLS sentence", stored.LastError, serr)
	}

	// The same server through the same relay in plain-loopback-only mode logs in: the
	// refusal above is the TLS mode's, not the relay's.
	a.IMAPTLS = PlainLoopbackOnly
	if err := f.poller.Test(context.Background(), a); err != nil {
		t.Fatalf("plain test through the relay: %v\n%s", err, f.srv.Logs())
	}
	rec.waitClosed(t)
	if !strings.Contains(strings.ToUpper(rec.clientSent()), "LOGIN") {
		t.Fatalf("the relay recorded no LOGIN from the plain test: %q", rec.clientSent())
	}
}
