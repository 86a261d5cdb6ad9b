package email

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"math/big"
	"mime"
	"net"
	netmail "net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"buddi/core/vault"
	"buddi/plugins"
)

// The peer's login, as the vault holds it for the test account.
const (
	peerUser     = "alice"
	peerPassword = "smtp-test-app-password"
	peerSecret   = "EMAIL_SMTP_TEST"
)

// delivered is one message a peer took: its envelope and its bytes.
type delivered struct {
	from  string
	rcpts []string
	data  string
}

// smtpPeer is a real SMTP server on loopback (go-smtp's server) recording what it is told.
type smtpPeer struct {
	srv  *smtp.Server
	host string
	port int

	mu        sync.Mutex
	mails     []delivered
	sessions  int      // connections that reached a session
	mailCalls int      // MAIL commands seen
	logins    []string // the users that logged in
	refuse    map[string]bool
	// onData, when set, runs after the body is read, with the session's connection; its
	// error is the answer to the body (and the message is then not recorded).
	onData func(c *smtp.Conn, data string) error
}

type peerOptions struct {
	tls      *tls.Config // the server's certificate: STARTTLS offered (or implicit, below)
	implicit bool        // TLS from the first byte
	auth     bool        // AUTH offered on a plaintext connection too
}

func newPeer(t *testing.T, o peerOptions) *smtpPeer {
	t.Helper()
	p := &smtpPeer{refuse: map[string]bool{}}
	p.srv = smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		p.mu.Lock()
		p.sessions++
		p.mu.Unlock()
		return &peerSession{p: p, c: c}, nil
	}))
	p.srv.Domain = "localhost"
	p.srv.AllowInsecureAuth = o.auth
	p.srv.ErrorLog = log.New(io.Discard, "", 0)
	p.srv.ReadTimeout, p.srv.WriteTimeout = 10*time.Second, 10*time.Second
	var l net.Listener
	var err error
	if o.implicit {
		l, err = tls.Listen("tcp", "127.0.0.1:0", o.tls)
	} else {
		p.srv.TLSConfig = o.tls
		l, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().(*net.TCPAddr)
	p.host, p.port = "127.0.0.1", addr.Port
	done := make(chan struct{})
	go func() { defer close(done); _ = p.srv.Serve(l) }()
	t.Cleanup(func() { _ = p.srv.Close(); <-done })
	return p
}

func (p *smtpPeer) account(mode string) Account {
	return Account{ID: 1, sealed: true, Name: "test", Address: "alice@example.org", IMAPHost: "127.0.0.1", IMAPPort: 143, IMAPTLS: PlainLoopbackOnly,
		SMTPHost: p.host, SMTPPort: p.port, SMTPTLS: mode, Username: peerUser, PasswordSecret: peerSecret}
}

func (p *smtpPeer) got() ([]delivered, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]delivered(nil), p.mails...), p.mailCalls
}

func (p *smtpPeer) sessionsSeen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sessions
}

func (p *smtpPeer) loginsSeen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.logins...)
}

// peerSession is one SMTP session with the peer.
type peerSession struct {
	p    *smtpPeer
	c    *smtp.Conn
	from string
	to   []string
}

func (s *peerSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *peerSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, user, pass string) error {
		if user != peerUser || pass != peerPassword {
			return errors.New("invalid credentials")
		}
		s.p.mu.Lock()
		s.p.logins = append(s.p.logins, user)
		s.p.mu.Unlock()
		return nil
	}), nil
}

func (s *peerSession) Mail(from string, _ *smtp.MailOptions) error {
	s.p.mu.Lock()
	s.p.mailCalls++
	s.p.mu.Unlock()
	s.from = from
	return nil
}

func (s *peerSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.p.mu.Lock()
	refused := s.p.refuse[to]
	s.p.mu.Unlock()
	if refused {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user here"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *peerSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.p.mu.Lock()
	hook := s.p.onData
	s.p.mu.Unlock()
	if hook != nil {
		if err := hook(s.c, string(b)); err != nil {
			return err
		}
	}
	s.p.mu.Lock()
	s.p.mails = append(s.p.mails, delivered{from: s.from, rcpts: s.to, data: string(b)})
	s.p.mu.Unlock()
	return nil
}

func (s *peerSession) Reset()        { s.from, s.to = "", nil }
func (s *peerSession) Logout() error { return nil }

// errDropped is a hook's answer after it dropped the connection itself.
var errDropped = errors.New("the test dropped the connection")

func secrets() Secrets { return vault.NewMemory(map[string]string{peerSecret: peerPassword}) }

func addrList(t *testing.T, list ...string) []*mail.Address {
	t.Helper()
	var out []*mail.Address
	for _, s := range list {
		a, err := netmail.ParseAddress(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

func outgoing(t *testing.T) Outgoing {
	return Outgoing{
		To: addrList(t, "Bob <bob@example.org>"), Cc: addrList(t, "carol@example.org"), Bcc: addrList(t, "dave@example.org"),
		Subject: "Lunch on Friday", Body: "Shall we?\n.\nA line with a lone dot above.\n", MessageID: "m1.test@example.org",
		Date: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
	}
}

// headerOf parses the header of a delivered message.
func headerOf(t *testing.T, data string) netmail.Header {
	t.Helper()
	m, err := netmail.ReadMessage(strings.NewReader(data))
	if err != nil {
		t.Fatalf("the delivered message does not parse: %v\n%s", err, data)
	}
	return m.Header
}

// TestSendDeliversToEveryRecipientWithoutABccHeader: MAIL FROM is the account's address,
// RCPT names To, Cc and Bcc, the message has From/To/Cc/Subject/Date/Message-ID/MIME-Version
// and a text/plain UTF-8 body with CRLF line endings, the dot-stuffed line arrives intact,
// the Bcc address appears nowhere in the message, and the login is the vault's app password
// since the server offers AUTH.
func TestSendDeliversToEveryRecipientWithoutABccHeader(t *testing.T) {
	p := newPeer(t, peerOptions{auth: true})
	rec, err := (&Sender{Timeout: 5 * time.Second}).Send(context.Background(), p.account(PlainLoopbackOnly), secrets(), outgoing(t))
	if err != nil {
		t.Fatal(err)
	}
	mails, _ := p.got()
	if len(mails) != 1 {
		t.Fatalf("delivered %d messages, want 1", len(mails))
	}
	m := mails[0]
	if m.from != "alice@example.org" || strings.Join(m.rcpts, ",") != "bob@example.org,carol@example.org,dave@example.org" {
		t.Fatalf("envelope = %s → %v, want alice to bob, carol and dave", m.from, m.rcpts)
	}
	if strings.Join(rec.Recipients, ",") != "bob@example.org,carol@example.org,dave@example.org" || rec.MessageID != "m1.test@example.org" {
		t.Fatalf("receipt = %+v", rec)
	}
	if strings.Contains(strings.ToLower(m.data), "bcc") || strings.Contains(m.data, "dave") {
		t.Fatalf("the Bcc recipient shows in the message:\n%s", m.data)
	}
	if strings.Contains(strings.ReplaceAll(m.data, "\r\n", ""), "\n") {
		t.Fatalf("a line of the message does not end in CRLF:\n%q", m.data)
	}
	h := headerOf(t, m.data)
	for key, want := range map[string]string{
		"From": "<alice@example.org>", "To": `"Bob" <bob@example.org>`, "Cc": "<carol@example.org>",
		"Subject": "Lunch on Friday", "Message-Id": "<m1.test@example.org>", "Mime-Version": "1.0",
		"Date": "Sun, 01 Mar 2026 12:00:00 +0000",
	} {
		if got := h.Get(key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || !strings.Contains(ct, "utf-8") {
		t.Errorf("Content-Type = %q, want text/plain; charset=utf-8", ct)
	}
	if h.Get("In-Reply-To") != "" || h.Get("References") != "" {
		t.Errorf("a new message carries thread headers: %q %q", h.Get("In-Reply-To"), h.Get("References"))
	}
	if !strings.Contains(m.data, "\r\n.\r\nA line with a lone dot above.") {
		t.Errorf("the lone dot did not arrive as sent:\n%q", m.data)
	}
	if logins := p.loginsSeen(); strings.Join(logins, ",") != peerUser {
		t.Errorf("logins = %v, want alice's once: the server offered AUTH", logins)
	}
}

// TestSendReplyHeadersAndEncodedWords: a reply carries In-Reply-To and References; a
// subject and a name outside ASCII are MIME-encoded and decode back to what was given.
func TestSendReplyHeadersAndEncodedWords(t *testing.T) {
	p := newPeer(t, peerOptions{})
	o := outgoing(t)
	o.Bcc = nil
	o.To = addrList(t, "Zoë Ünal <zoe@example.org>")
	o.Subject = replySubject(replySubject("Café à midi"))
	o.InReplyTo, o.References = "orig@example.net", []string{"first@example.net", "orig@example.net"}
	if _, err := (&Sender{Timeout: 5 * time.Second}).Send(context.Background(), p.account(PlainLoopbackOnly), nil, o); err != nil {
		t.Fatal(err)
	}
	mails, _ := p.got()
	h := headerOf(t, mails[0].data)
	if h.Get("In-Reply-To") != "<orig@example.net>" || h.Get("References") != "<first@example.net> <orig@example.net>" {
		t.Fatalf("thread headers = %q, %q", h.Get("In-Reply-To"), h.Get("References"))
	}
	if raw := h.Get("Subject"); !strings.HasPrefix(raw, "=?utf-8?") {
		t.Errorf("the subject is not MIME-encoded: %q", raw)
	}
	if subj, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject")); err != nil || subj != "Re: Café à midi" {
		t.Errorf("subject decodes to %q (%v), want one Re: and the accents", subj, err)
	}
	to, err := h.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Name != "Zoë Ünal" || to[0].Address != "zoe@example.org" {
		t.Errorf("To = %v (%v), want Zoë Ünal <zoe@example.org>", to, err)
	}
}

// TestSendRefusedRecipientSendsNothing: a recipient the server refuses ends the send
// before DATA, as a plain failure naming the address; nothing is delivered to anyone.
func TestSendRefusedRecipientSendsNothing(t *testing.T) {
	p := newPeer(t, peerOptions{})
	p.refuse["carol@example.org"] = true
	dispatched := 0
	ctx := plugins.WithDispatch(context.Background(), func(context.Context) error { dispatched++; return nil })
	_, err := (&Sender{Timeout: 5 * time.Second}).Send(ctx, p.account(PlainLoopbackOnly), nil, outgoing(t))
	if err == nil || errors.Is(err, plugins.ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want a plain failure", err)
	}
	if !strings.Contains(err.Error(), "nothing was sent") || !strings.Contains(err.Error(), "carol@example.org") || !strings.Contains(err.Error(), "550") {
		t.Fatalf("err = %q, want it to say nothing was sent and name the refused recipient", err)
	}
	if mails, _ := p.got(); len(mails) != 0 || dispatched != 0 {
		t.Fatalf("delivered %d, dispatched %d; want nothing", len(mails), dispatched)
	}
}

// TestSendDispatchRefusedSendsNothing: when the ledger cannot record the dispatch, DATA is
// never sent; when it can, it is recorded once, before the server has the message.
func TestSendDispatchRefusedSendsNothing(t *testing.T) {
	p := newPeer(t, peerOptions{})
	ctx := plugins.WithDispatch(context.Background(), func(context.Context) error { return errors.New("the ledger is down") })
	_, err := (&Sender{Timeout: 5 * time.Second}).Send(ctx, p.account(PlainLoopbackOnly), nil, outgoing(t))
	if err == nil || errors.Is(err, plugins.ErrOutcomeUnknown) || !strings.Contains(err.Error(), "the ledger is down") {
		t.Fatalf("err = %v, want a plain failure naming the ledger", err)
	}
	if mails, _ := p.got(); len(mails) != 0 {
		t.Fatalf("delivered %d, want none", len(mails))
	}
	var before int
	ctx = plugins.WithDispatch(context.Background(), func(context.Context) error {
		mails, _ := p.got()
		before = len(mails) + 1
		return nil
	})
	if _, err := (&Sender{Timeout: 5 * time.Second}).Send(ctx, p.account(PlainLoopbackOnly), nil, outgoing(t)); err != nil {
		t.Fatal(err)
	}
	if mails, _ := p.got(); before != 1 || len(mails) != 1 {
		t.Fatalf("dispatch saw %d delivered before it, %d after; want the dispatch first", before-1, len(mails))
	}
}

// TestSendConnectionDroppedAfterBodyIsUnknown: the server takes the whole message and the
// connection drops before its answer reaches the client: the outcome is unknown (here it
// was in fact delivered), said in one sentence naming the Message-ID.
func TestSendConnectionDroppedAfterBodyIsUnknown(t *testing.T) {
	p := newPeer(t, peerOptions{})
	p.onData = func(c *smtp.Conn, data string) error {
		// The message is taken (recorded) before the connection drops, so the client's
		// return cannot overtake the record.
		p.mu.Lock()
		p.mails = append(p.mails, delivered{data: data})
		p.mu.Unlock()
		_ = c.Conn().Close()
		return errDropped
	}
	_, err := (&Sender{Timeout: 5 * time.Second}).Send(context.Background(), p.account(PlainLoopbackOnly), nil, outgoing(t))
	if !errors.Is(err, plugins.ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want one matching ErrOutcomeUnknown", err)
	}
	if s := err.Error(); !strings.Contains(s, "may or may not have been sent") || !strings.Contains(s, "<m1.test@example.org>") || strings.Contains(s, "\n") {
		t.Fatalf("err = %q, want one sentence saying it may or may not have been sent, with the Message-ID", s)
	}
	if mails, _ := p.got(); len(mails) != 1 {
		t.Fatalf("the server took %d messages; it took this one, which is why the outcome cannot be called failed", len(mails))
	}
}

// TestSendCancelledAwaitingTheAnswerIsUnknown: the server holds its answer to the body and
// the send's context ends: unknown, and the send returns at once rather than at the
// client's own timeout.
func TestSendCancelledAwaitingTheAnswerIsUnknown(t *testing.T) {
	p := newPeer(t, peerOptions{})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	took := make(chan struct{})
	p.onData = func(*smtp.Conn, string) error {
		close(took)
		<-release
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-took; cancel() }()
	start := time.Now()
	_, err := (&Sender{Timeout: 30 * time.Second}).Send(ctx, p.account(PlainLoopbackOnly), nil, outgoing(t))
	if !errors.Is(err, plugins.ErrOutcomeUnknown) || !strings.Contains(err.Error(), "stopped") {
		t.Fatalf("err = %v, want unknown, saying it was stopped", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the cancelled send returned after %v", d)
	}
}

// TestSendBodyRefusedIsFailed: a 5xx answer to the body is the server refusing the
// message: failed, not unknown.
func TestSendBodyRefusedIsFailed(t *testing.T) {
	p := newPeer(t, peerOptions{})
	p.onData = func(*smtp.Conn, string) error {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "looks like spam"}
	}
	_, err := (&Sender{Timeout: 5 * time.Second}).Send(context.Background(), p.account(PlainLoopbackOnly), nil, outgoing(t))
	if err == nil || errors.Is(err, plugins.ErrOutcomeUnknown) || !strings.Contains(err.Error(), "refused the message") || !strings.Contains(err.Error(), "554") {
		t.Fatalf("err = %v, want a plain failure with the server's 554", err)
	}
}

// TestSendStartTLSRefusedWithoutIt: in starttls mode a server that does not offer STARTTLS
// is refused in one sentence before any MAIL command.
func TestSendStartTLSRefusedWithoutIt(t *testing.T) {
	p := newPeer(t, peerOptions{auth: true})
	_, err := (&Sender{Timeout: 5 * time.Second}).Send(context.Background(), p.account(StartTLS), secrets(), outgoing(t))
	if err == nil || !strings.Contains(err.Error(), "does not offer STARTTLS") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v, want the one sentence on STARTTLS", err)
	}
	if mails, calls := p.got(); len(mails) != 0 || calls != 0 {
		t.Fatalf("delivered %d after %d MAIL commands; want none", len(mails), calls)
	}
}

// TestSendStartTLSAndImplicitTLSLogIn: over STARTTLS and over TLS from the first byte, the
// certificate is verified, the login is AUTH PLAIN with the vault's app password, and the
// message is delivered; a wrong password sends nothing and says which vault entry.
func TestSendStartTLSAndImplicitTLSLogIn(t *testing.T) {
	serverTLS, clientTLS := testCertificate(t)
	for _, mode := range []string{StartTLS, TLS} {
		t.Run(mode, func(t *testing.T) {
			p := newPeer(t, peerOptions{tls: serverTLS, implicit: mode == TLS})
			s := &Sender{Timeout: 5 * time.Second, TLSConfig: clientTLS}
			if _, err := s.Send(context.Background(), p.account(mode), secrets(), outgoing(t)); err != nil {
				t.Fatal(err)
			}
			if mails, _ := p.got(); len(mails) != 1 || strings.Join(p.loginsSeen(), ",") != peerUser {
				t.Fatalf("delivered %d with logins %v; want one after alice's login", len(mails), p.loginsSeen())
			}
			wrong := vault.NewMemory(map[string]string{peerSecret: "not-it"})
			_, err := s.Send(context.Background(), p.account(mode), wrong, outgoing(t))
			if err == nil || errors.Is(err, plugins.ErrOutcomeUnknown) || !strings.Contains(err.Error(), peerSecret) || strings.Contains(err.Error(), "not-it") {
				t.Fatalf("err = %v, want a refused login naming the vault entry, not the password", err)
			}
			if mails, _ := p.got(); len(mails) != 1 {
				t.Fatalf("delivered %d, want still 1", len(mails))
			}
			// The system's roots do not know the test certificate: refused before any MAIL.
			if _, err := (&Sender{Timeout: 5 * time.Second}).Send(context.Background(), p.account(mode), secrets(), outgoing(t)); err == nil {
				t.Fatal("sent over a certificate nobody vouches for")
			}
			if _, calls := p.got(); calls != 1 {
				t.Fatalf("%d MAIL commands, want only the first send's", calls)
			}
		})
	}
}

// TestOutgoingRefusesHeaderInjection: a line break in a subject, a name or an address, a
// non-ASCII address, no recipient, or no Message-ID is refused before any connection.
func TestOutgoingRefusesHeaderInjection(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Outgoing)
		want string
	}{
		{"subject", func(o *Outgoing) { o.Subject = "Hi\r\nBcc: eve@example.org" }, "line break"},
		{"name", func(o *Outgoing) { o.To[0].Name = "Bob\nBcc: eve@example.org" }, "line break"},
		{"address", func(o *Outgoing) { o.Cc[0].Address = "carol@example.org\r\nRCPT TO:<eve@example.org>" }, "line break"},
		{"control", func(o *Outgoing) { o.Subject = "a\x00b" }, "control character"},
		{"reordering", func(o *Outgoing) { o.Subject = "Invoice \u202egnp.exe" }, "reorders"},
		{"non-ascii address", func(o *Outgoing) { o.To[0].Address = "zoë@example.org" }, "ASCII"},
		{"no recipient", func(o *Outgoing) { o.To, o.Cc, o.Bcc = nil, nil, nil }, "no recipient"},
		{"no message id", func(o *Outgoing) { o.MessageID = "" }, "Message-ID"},
		{"bad reference", func(o *Outgoing) { o.References = []string{"a> <b"} }, "Message-ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := outgoing(t)
			tt.edit(&o)
			if _, err := o.Render("alice@example.org"); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Render = %v, want a refusal with %q", err, tt.want)
			}
			// Send refuses it before dialling: the port is closed.
			a := Account{sealed: true, Name: "test", Address: "alice@example.org", IMAPHost: "127.0.0.1", IMAPPort: 1, IMAPTLS: PlainLoopbackOnly,
				SMTPHost: "127.0.0.1", SMTPPort: 1, SMTPTLS: PlainLoopbackOnly, Username: "alice", PasswordSecret: peerSecret}
			if _, err := Send(context.Background(), a, nil, o); err == nil || !strings.Contains(err.Error(), "cannot be sent") {
				t.Fatalf("Send = %v, want the refusal before any connection", err)
			}
		})
	}
}

// TestReplySubjectPrefixesOnce: "Re: " is added once, whatever its case.
func TestReplySubjectPrefixesOnce(t *testing.T) {
	for in, want := range map[string]string{"Lunch": "Re: Lunch", "Re: Lunch": "Re: Lunch", "RE:Lunch": "RE:Lunch", "": "Re: ", "  a \t b ": "Re: a b"} {
		if got := replySubject(in); got != want {
			t.Errorf("replySubject(%q) = %q, want %q", in, got, want)
		}
	}
}

// testCertificate makes a self-signed certificate for 127.0.0.1 and a client configuration
// that trusts it.
func testCertificate(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
}

// What the owner approves is what ships, so a message carrying a character no reader can see
// is refused before it is drafted or sent: tag characters spelling a secret after an innocent
// line (the way a model has been made to smuggle data out), a run of variation selectors
// carrying bytes, a zero-width space, a carriage return. Writing that uses an invisible
// character keeps it: an emoji family, a Persian word, a Hindi conjunct.
func TestOutgoingRefusesWhatTheOwnerCannotSee(t *testing.T) {
	tags := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			b.WriteRune(0xE0000 + r)
		}
		return b.String()
	}
	for _, tt := range []struct {
		name string
		edit func(*Outgoing)
		want string
	}{
		{"tags in the body", func(o *Outgoing) { o.Body = "See you at noon." + tags("vault key: hunter2") }, "the body"},
		{"selectors in the body", func(o *Outgoing) { o.Body = "ok 😀\uFE00\uFE01\uFE02\uFE03" }, "U+FE01"},
		{"zero-width space in the body", func(o *Outgoing) { o.Body = "pay\u200Bpal" }, "U+200B"},
		{"carriage return in the body", func(o *Outgoing) { o.Body = "yes\rno" }, "U+000D"},
		{"tags in the subject", func(o *Outgoing) { o.Subject = "Lunch" + tags("x") }, "the subject"},
		{"zero-width in a name", func(o *Outgoing) { o.To[0].Name = "Bob\u200B" }, "name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := outgoing(t)
			tt.edit(&o)
			err := o.Check("alice@example.org")
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "cannot see") {
				t.Fatalf("Check = %v, want a refusal naming %q that says the owner cannot see it", err, tt.want)
			}
		})
	}
	for _, body := range []string{"👨\u200D👩\u200D👧 say hi ❤\uFE0F", "می\u200Cخواهم بیایم", "क्\u200Dष", "line\r\nnext\tcolumn\n"} {
		o := outgoing(t)
		o.Body = body
		if err := o.Check("alice@example.org"); err != nil {
			t.Errorf("body %+q refused: %v", body, err)
		}
	}
}
