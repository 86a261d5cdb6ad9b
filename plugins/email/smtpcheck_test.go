package email

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"buddi/core/vault"
)

// sentNothing fails t unless the peer saw no MAIL command and took no message.
func sentNothing(t *testing.T, p *smtpPeer) {
	t.Helper()
	if mails, calls := p.got(); len(mails) != 0 || calls != 0 {
		t.Fatalf("the server took %d messages after %d MAIL commands; a check sends nothing", len(mails), calls)
	}
}

// TestSMTPCheckLogsInAndSendsNothing: in each TLS mode the check greets, logs in with the
// vault's app password (AUTH PLAIN, the server offering it) and quits: one login, no MAIL. A loopback server that offers no AUTH passes without a login, as a send
// to it would.
func TestSMTPCheckLogsInAndSendsNothing(t *testing.T) {
	serverTLS, clientTLS := testCertificate(t)
	for _, tt := range []struct {
		mode string
		opts peerOptions
	}{
		{PlainLoopbackOnly, peerOptions{auth: true}},
		{StartTLS, peerOptions{tls: serverTLS}},
		{TLS, peerOptions{tls: serverTLS, implicit: true}},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			p := newPeer(t, tt.opts)
			s := &Sender{Timeout: 5 * time.Second, TLSConfig: clientTLS}
			if err := s.Check(context.Background(), p.account(tt.mode), secrets()); err != nil {
				t.Fatal(err)
			}
			if logins := p.loginsSeen(); strings.Join(logins, ",") != peerUser {
				t.Fatalf("logins %v; want alice's once", logins)
			}
			sentNothing(t, p)
		})
	}
	t.Run("no AUTH on loopback", func(t *testing.T) {
		p := newPeer(t, peerOptions{})
		if err := (&Sender{Timeout: 5 * time.Second}).Check(context.Background(), p.account(PlainLoopbackOnly), nil); err != nil {
			t.Fatal(err)
		}
		if logins := p.loginsSeen(); len(logins) != 0 || p.sessionsSeen() != 1 {
			t.Fatalf("logins %v in %d sessions; want one session and no login offered", logins, p.sessionsSeen())
		}
		sentNothing(t, p)
	})
}

// TestSMTPCheckWrongPasswordNamesTheVaultEntry: a refused login is one sentence naming the
// step and the vault entry, never the password; a missing entry says how to set it. Nothing
// is sent either way.
func TestSMTPCheckWrongPasswordNamesTheVaultEntry(t *testing.T) {
	p := newPeer(t, peerOptions{auth: true})
	s := &Sender{Timeout: 5 * time.Second}
	err := s.Check(context.Background(), p.account(PlainLoopbackOnly), vault.NewMemory(map[string]string{peerSecret: "not-it"}))
	oneSentence(t, err)
	if msg := err.Error(); !strings.Contains(msg, "SMTP") || !strings.Contains(msg, "logging in") || !strings.Contains(msg, peerSecret) || strings.Contains(msg, "not-it") {
		t.Fatalf("err = %q, want the SMTP login refused, naming %s and not the password", msg, peerSecret)
	}
	err = s.Check(context.Background(), p.account(PlainLoopbackOnly), vault.NewMemory(nil))
	oneSentence(t, err)
	if msg := err.Error(); !strings.Contains(msg, "buddi vault set "+peerSecret) {
		t.Fatalf("err = %q, want it to say how to set the missing entry", msg)
	}
	if logins := p.loginsSeen(); len(logins) != 0 {
		t.Fatalf("logins = %v, want none", logins)
	}
	sentNothing(t, p)
}

// TestSMTPCheckStartTLSRefusedWithoutIt: in starttls mode a server that offers no STARTTLS
// is refused in one sentence before the login, though it offers AUTH in the clear.
func TestSMTPCheckStartTLSRefusedWithoutIt(t *testing.T) {
	p := newPeer(t, peerOptions{auth: true})
	err := (&Sender{Timeout: 5 * time.Second}).Check(context.Background(), p.account(StartTLS), secrets())
	oneSentence(t, err)
	if !strings.Contains(err.Error(), "does not offer STARTTLS") {
		t.Fatalf("err = %q, want the sentence on STARTTLS", err)
	}
	if logins := p.loginsSeen(); len(logins) != 0 {
		t.Fatalf("logins = %v, want none: the password must not cross in the clear", logins)
	}
	sentNothing(t, p)
}

// stallingSMTP is a loopback server that greets (unless silent), answers EHLO offering AUTH
// PLAIN, and then answers nothing else: each step after it must end at the deadline.
func stallingSMTP(t *testing.T, silent bool) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				if silent {
					_, _ = c.Read(make([]byte, 1))
					return
				}
				_, _ = c.Write([]byte("220 localhost ESMTP\r\n"))
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if strings.HasPrefix(strings.ToUpper(line), "EHLO") {
						_, _ = c.Write([]byte("250-localhost\r\n250 AUTH PLAIN\r\n"))
					}
				}
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// TestSMTPCheckFailsWithinTheDeadline: a closed port, a server that never greets and one
// that never answers the login each end in one sentence naming the step, within the
// sender's deadline rather than the SMTP client's minutes.
func TestSMTPCheckFailsWithinTheDeadline(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr).Port
	l.Close()
	const timeout = 300 * time.Millisecond
	for _, tt := range []struct {
		name string
		port int
		want string
	}{
		{"closed port", closed, "could not reach the SMTP server"},
		{"no greeting", stallingSMTP(t, true), "did not greet"},
		{"no answer to AUTH", stallingSMTP(t, false), "logging in to"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := Account{sealed: true, Name: "test", Address: "alice@example.org", IMAPHost: "127.0.0.1", IMAPPort: 143, IMAPTLS: PlainLoopbackOnly,
				SMTPHost: "127.0.0.1", SMTPPort: tt.port, SMTPTLS: PlainLoopbackOnly, Username: peerUser, PasswordSecret: peerSecret}
			start := time.Now()
			err := (&Sender{Timeout: timeout}).Check(context.Background(), a, secrets())
			took := time.Since(start)
			oneSentence(t, err)
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %q, want it to say %q", err, tt.want)
			}
			if took > 10*timeout {
				t.Fatalf("the check took %v with a deadline of %v per step", took, timeout)
			}
			t.Logf("%s: %v after %v", tt.name, err, took.Round(time.Millisecond))
		})
	}
}

// TestSMTPCheckStoppedSaysSo: a check whose context ends while the server holds its answer
// returns at once, saying it was stopped.
func TestSMTPCheckStoppedSaysSo(t *testing.T) {
	port := stallingSMTP(t, false)
	a := Account{sealed: true, Name: "test", Address: "alice@example.org", IMAPHost: "127.0.0.1", IMAPPort: 143, IMAPTLS: PlainLoopbackOnly,
		SMTPHost: "127.0.0.1", SMTPPort: port, SMTPTLS: PlainLoopbackOnly, Username: peerUser, PasswordSecret: peerSecret}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := (&Sender{Timeout: 30 * time.Second}).Check(ctx, a, secrets())
	if err == nil || !strings.Contains(err.Error(), "stopped") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v, want one sentence saying it was stopped", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the stopped check returned after %v", took)
	}
}
