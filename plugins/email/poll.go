package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// DefaultTimeout bounds every network call of a poll (dial, greeting, login, select, each
// fetch chunk, logout).
const DefaultTimeout = 20 * time.Second

// MaxBody bounds the raw message kept in email.bodies; a longer one is kept truncated.
const MaxBody = 4 << 20

// chunk is how many UIDs one FETCH asks for.
const chunk = 100

// inbox is the one mailbox this build reads.
const inbox = "INBOX"

// Secrets is where the app passwords are: the vault (core/vault.Vault satisfies it).
type Secrets interface {
	// Get returns the value stored under name.
	Get(name string) (string, error)
}

// Poller reads accounts' INBOXes into the email schema.
type Poller struct {
	// Store is where accounts, mailboxes and messages are kept.
	Store Store
	// Secrets holds the app passwords, under the accounts' PasswordSecret names.
	Secrets Secrets
	// Timeout bounds each network call; zero means [DefaultTimeout].
	Timeout time.Duration
	// TLSConfig is the base TLS configuration (certificates are always verified against
	// the account's host). Nil means the system's roots.
	TLSConfig *tls.Config
	// Now is the clock of last_sync and last_error. Default: time.Now.
	Now func() time.Time

	onIdle  func() // called as each IDLE begins (tests)
	onRound func() // called as each round of PollWaiting ends (tests)
}

// PollResult is what one poll did.
type PollResult struct {
	Mailbox    Mailbox // the mailbox row read (after the poll, its cursor moved)
	NewMailbox bool    // the row was created by this poll (first seen, or a new UIDVALIDITY)
	UIDNext    uint32  // the server's UIDNEXT
	Recorded   int     // messages recorded for the first time
	Fetched    int     // messages fetched from the server
}

func (p *Poller) timeout() time.Duration { return deadlineOr(p.Timeout) }

func (p *Poller) now() time.Time { return clockOr(p.Now) }

// deadlineOr is t, or [DefaultTimeout] when t is not set: the poller's and the sender's
// deadline of each network call.
func deadlineOr(t time.Duration) time.Duration {
	if t > 0 {
		return t
	}
	return DefaultTimeout
}

// clockOr is now's time, or the system's when now is not set.
func clockOr(now func() time.Time) time.Time {
	if now != nil {
		return now()
	}
	return time.Now()
}

// Poll reads the account's INBOX once and records what is new. A failure is returned as
// one sentence and kept as the account's last error; a success clears it. A poll stopped by
// its context's end says so and leaves the last error as it was.
func (p *Poller) Poll(ctx context.Context, a Account) (PollResult, error) {
	res, err := p.poll(ctx, a)
	switch {
	case err != nil && ctx.Err() != nil:
		err = fmt.Errorf("email: polling %s failed: it was stopped before it finished (%v); the next poll starts again from the cursor", a.Name, context.Cause(ctx))
	case err != nil:
		err = fmt.Errorf("email: polling %s failed: %s", a.Name, p.withoutPassword(a, err.Error()))
	}
	if ctx.Err() != nil && err != nil {
		return res, err // a stop is not the account's fault: its last error stays what it was
	}
	if serr := p.Store.setResult(context.WithoutCancel(ctx), a.ID, p.now(), err); serr != nil && err == nil {
		err = serr
	}
	return res, err
}

// withoutPassword is sentence with the account's app password, should a server have
// repeated it, replaced by the name of its vault entry: the sentence is kept and shown.
func (p *Poller) withoutPassword(a Account, sentence string) string {
	if p.Secrets == nil {
		return sentence
	}
	password, err := p.Secrets.Get(a.PasswordSecret)
	if err != nil || len(password) < 4 {
		return sentence
	}
	return strings.ReplaceAll(sentence, password, "‹secret:"+a.PasswordSecret+"›")
}

// session is a logged-in connection whose every call is under the deadline.
type session struct {
	conn    net.Conn
	c       *imapclient.Client
	timeout time.Duration
	addr    string
}

// errDeadline is what a call that outlived its deadline returns.
var errDeadline = errors.New("no answer before the deadline")

// call runs f under the deadline: the IMAP client sets its own socket deadlines (of half a
// minute and more), so a watchdog closes the connection when the deadline passes, and the
// call fails with [errDeadline].
func (s *session) call(f func() error) error {
	var late atomic.Bool
	timer := time.AfterFunc(s.timeout, func() {
		late.Store(true)
		_ = s.conn.Close()
	})
	err := f()
	timer.Stop()
	if late.Load() {
		return errDeadline
	}
	return err
}

// caps is the server's capabilities, asked for under the deadline when the greeting and the
// login did not say them (nil when it did not answer).
func (s *session) caps() imap.CapSet {
	var caps imap.CapSet
	_ = s.call(func() error { caps = s.c.Caps(); return nil })
	return caps
}

func (s *session) close() {
	if s.c == nil {
		_ = s.conn.Close()
		return
	}
	_ = s.call(func() error { return s.c.Logout().Wait() })
	_ = s.c.Close()
}

// Dial connects to the account's IMAP server and logs in, every step under the deadline.
func (p *Poller) dial(ctx context.Context, a Account) (*session, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if err := a.usable(); err != nil {
		return nil, err
	}
	password, err := p.Secrets.Get(a.PasswordSecret)
	if err != nil {
		return nil, fmt.Errorf("the app password is not readable from the vault entry %s (%v); set it with buddi vault set %s", a.PasswordSecret, err, a.PasswordSecret)
	}
	addr := net.JoinHostPort(a.IMAPHost, strconv.Itoa(a.IMAPPort))
	t := p.timeout()
	dctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("could not reach the IMAP server %s within %s (%v); check the host, the port and the network", addr, t, err)
	}
	if a.IMAPTLS == PlainLoopbackOnly {
		if ip, ok := conn.RemoteAddr().(*net.TCPAddr); !ok || !ip.IP.IsLoopback() {
			conn.Close()
			return nil, fmt.Errorf("the IMAP server %s answered from a non-loopback address, so plain IMAP is refused; use tls or starttls", addr)
		}
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	s := &session{conn: conn, timeout: t, addr: addr}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if p.TLSConfig != nil {
		cfg = p.TLSConfig.Clone()
	}
	cfg.ServerName = a.IMAPHost
	opts := &imapclient.Options{TLSConfig: cfg, UnilateralDataHandler: unilateralFrom(ctx), WordDecoder: wordDecoder}
	switch a.IMAPTLS {
	case TLS:
		tc := tls.Client(conn, cfg)
		if err := s.call(func() error { return tc.HandshakeContext(dctx) }); err != nil {
			conn.Close()
			return nil, fmt.Errorf("the TLS handshake with %s failed (%v); check the port is the server's TLS port and its certificate is valid for %s", addr, err, a.IMAPHost)
		}
		s.c = imapclient.New(tc, opts)
	case StartTLS:
		var c *imapclient.Client
		err := s.call(func() (err error) { c, err = imapclient.NewStartTLS(conn, opts); return err })
		if err != nil {
			conn.Close()
			if _, refused := errors.AsType[*imap.Error](err); refused {
				// The server answered STARTTLS with NO or BAD: nothing but that command was said.
				return nil, fmt.Errorf("the IMAP server %s does not offer STARTTLS (%s), which the account's mode (starttls) requires before its password goes over the connection; use tls with the server's TLS port (993)", addr, describe(err))
			}
			return nil, fmt.Errorf("STARTTLS with %s failed (%v); check the server offers STARTTLS on that port and its certificate is valid for %s", addr, describe(err), a.IMAPHost)
		}
		s.c = c
	default:
		s.c = imapclient.New(conn, opts)
	}
	if err := s.call(s.c.WaitGreeting); err != nil {
		s.c.Close()
		return nil, fmt.Errorf("the IMAP server %s sent no greeting within %s (%v); check it is an IMAP port", addr, t, describe(err))
	}
	if err := s.call(func() error { return s.c.Login(a.Username, password).Wait() }); err != nil {
		s.c.Close()
		if _, refused := errors.AsType[*imap.Error](err); !refused {
			return nil, fmt.Errorf("logging in to %s as %s got no answer (%s); check the server is reachable and answers on that port", addr, a.Username, describe(err))
		}
		return nil, fmt.Errorf("logging in to %s as %s was refused (%s); check the username and the app password in the vault entry %s", addr, a.Username, describe(err), a.PasswordSecret)
	}
	return s, nil
}

// Test logs in to the account's IMAP server and SELECTs the INBOX read-only, changing
// nothing; it says in one sentence what failed.
func (p *Poller) Test(ctx context.Context, a Account) error {
	s, err := p.dial(ctx, a)
	if err != nil {
		return fmt.Errorf("email: testing the IMAP server of %s failed: %s", a.Name, err.Error())
	}
	defer s.close()
	if err := s.call(func() error {
		_, err := s.c.Select(inbox, &imap.SelectOptions{ReadOnly: true}).Wait()
		return err
	}); err != nil {
		return fmt.Errorf("email: testing the IMAP server of %s failed: examining INBOX on %s failed (%s)", a.Name, s.addr, describe(err))
	}
	return nil
}

func (p *Poller) poll(ctx context.Context, a Account) (PollResult, error) {
	var res PollResult
	s, err := p.dial(ctx, a)
	if err != nil {
		return res, err
	}
	defer s.close()
	stop := context.AfterFunc(ctx, func() { _ = s.conn.Close() })
	defer stop()
	var sel *imap.SelectData
	condStore := s.caps().Has(imap.CapCondStore)
	if err := s.call(func() (err error) {
		// EXAMINE, not SELECT: reading changes nothing, not even \Recent.
		sel, err = s.c.Select(inbox, &imap.SelectOptions{ReadOnly: true, CondStore: condStore}).Wait()
		return err
	}); err != nil {
		return res, fmt.Errorf("selecting INBOX on %s failed (%s)", s.addr, describe(err))
	}
	if sel.UIDValidity == 0 || sel.UIDNext == 0 {
		return res, fmt.Errorf("the IMAP server %s did not report INBOX's UIDVALIDITY and UIDNEXT, which reading without a cursor would need", s.addr)
	}
	res.UIDNext = uint32(sel.UIDNext)
	start := uint32(0)
	if n := uint32(sel.UIDNext) - 1; n > uint32(a.Backfill) {
		start = n - uint32(a.Backfill)
	}
	mb, created, err := p.Store.mailbox(ctx, a.ID, inbox, sel.UIDValidity, start)
	if err != nil {
		return res, err
	}
	res.NewMailbox = created
	for from := mb.LastUID + 1; from < uint32(sel.UIDNext); from += chunk {
		to := min(from+chunk-1, uint32(sel.UIDNext)-1)
		msgs, err := p.fetch(s, from, to)
		if err != nil {
			return res, err
		}
		res.Fetched += len(msgs)
		n, err := p.Store.record(ctx, mb, msgs, to)
		if err != nil {
			return res, err
		}
		res.Recorded += n
		mb.LastUID = to
		if to == uint32(sel.UIDNext)-1 {
			break // the last chunk (and no wrap of from near 2^32)
		}
	}
	if err := p.syncFlags(ctx, s, mb, condStore, sel.HighestModSeq); err != nil {
		return res, err
	}
	res.Mailbox = mb
	return res, nil
}

var bodySection = &imap.FetchItemBodySection{Peek: true, Partial: &imap.SectionPartial{Offset: 0, Size: MaxBody}}

// fetch reads UIDs from..to (those that exist) with ENVELOPE, RFC822.SIZE and BODY.PEEK[].
func (p *Poller) fetch(s *session, from, to uint32) ([]fetched, error) {
	set := imap.UIDSet{imap.UIDRange{Start: imap.UID(from), Stop: imap.UID(to)}}
	var bufs []*imapclient.FetchMessageBuffer
	if err := s.call(func() (err error) {
		bufs, err = s.c.Fetch(set, &imap.FetchOptions{
			UID: true, Envelope: true, RFC822Size: true, Flags: true, BodySection: []*imap.FetchItemBodySection{bodySection},
		}).Collect()
		return err
	}); err != nil {
		return nil, fmt.Errorf("fetching UIDs %d to %d from %s failed (%s)", from, to, s.addr, describe(err))
	}
	out := make([]fetched, 0, len(bufs))
	for _, b := range bufs {
		if uint32(b.UID) < from || uint32(b.UID) > to {
			continue
		}
		m := fetched{Message: Message{UID: uint32(b.UID), Size: b.RFC822Size, Flags: flagNames(b.Flags)}}
		if e := b.Envelope; e != nil {
			m.MessageID, m.Subject, m.Date = e.MessageID, e.Subject, e.Date
			m.From, m.To = addrs(e.From), addrs(e.To)
		}
		m.raw = b.FindBodySection(bodySection)
		if m.raw == nil {
			m.raw = []byte{}
		}
		m.truncated = b.RFC822Size > int64(len(m.raw))
		out = append(out, m)
	}
	return out, nil
}

func addrs(list []imap.Address) string {
	var out []string
	for _, a := range list {
		s := a.Addr()
		if a.Name != "" {
			s = a.Name + " <" + s + ">"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// describe turns an IMAP or network error into a clause.
func describe(err error) string {
	if errors.Is(err, errDeadline) {
		return errDeadline.Error()
	}
	var ie *imap.Error
	if errors.As(err, &ie) {
		if ie.Code != "" {
			return fmt.Sprintf("the server said [%s] %s", ie.Code, ie.Text)
		}
		return "the server said " + ie.Text
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "no answer before the deadline"
	}
	return err.Error()
}
