package email

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"buddi/internal/readable"
	"buddi/plugins"
)

// MaxRecipients bounds the To, Cc and Bcc addresses of one message, together.
const MaxRecipients = 100

// MaxMessageBody bounds the text of one message's body, in bytes.
const MaxMessageBody = 1 << 20

// maxSubject bounds a subject, in bytes.
const maxSubject = 998

// Outgoing is one message to send. The From is never in it: a message is always sent from
// its account's address.
type Outgoing struct {
	To  []*mail.Address // the To header's addresses
	Cc  []*mail.Address // the Cc header's addresses
	Bcc []*mail.Address // recipients named in no header, only in RCPT
	// Subject is the Subject header, encoded when it is not ASCII.
	Subject string
	// Body is the text/plain body, in UTF-8 (sent quoted-printable, lines ending CRLF).
	Body string
	// MessageID is the Message-ID, without angle brackets; it is required.
	MessageID string
	// InReplyTo is the Message-ID answered, without angle brackets; empty for a new thread.
	InReplyTo string
	// References are the thread's Message-IDs, oldest first, without angle brackets.
	References []string
	// Date is the Date header; zero means the moment it is rendered.
	Date time.Time
}

// Recipients returns every RCPT address (To, then Cc, then Bcc), each once.
func (o Outgoing) Recipients() []string {
	var out []string
	seen := map[string]bool{}
	for _, list := range [][]*mail.Address{o.To, o.Cc, o.Bcc} {
		for _, a := range list {
			if key := strings.ToLower(a.Address); !seen[key] {
				seen[key] = true
				out = append(out, a.Address)
			}
		}
	}
	return out
}

// Check says in one sentence what makes o unsendable from the address from, or returns nil:
// no recipient, too many, an address or header value that is not one line, a missing
// Message-ID, a body too long.
func (o Outgoing) Check(from string) error {
	if err := CheckAddress(from); err != nil {
		return err
	}
	n := len(o.To) + len(o.Cc) + len(o.Bcc)
	switch {
	case n == 0:
		return errors.New("the message has no recipient; give at least one To, Cc or Bcc address")
	case n > MaxRecipients:
		return fmt.Errorf("the message has %d recipients; one message goes to at most %d", n, MaxRecipients)
	}
	for _, list := range [][]*mail.Address{o.To, o.Cc, o.Bcc} {
		for _, a := range list {
			if a == nil {
				return errors.New("the message has an empty recipient")
			}
			if err := CheckAddress(a.Address); err != nil {
				return err
			}
			if err := checkHeaderValue("a recipient's name", a.Name); err != nil {
				return err
			}
			if err := checkVisible("a recipient's name", a.Name); err != nil {
				return err
			}
		}
	}
	if err := checkHeaderValue("the subject", o.Subject); err != nil {
		return err
	}
	if err := checkVisible("the subject", o.Subject); err != nil {
		return err
	}
	if len(o.Subject) > maxSubject {
		return fmt.Errorf("the subject is %d bytes; give one of at most %d", len(o.Subject), maxSubject)
	}
	if !utf8.ValidString(o.Body) {
		return errors.New("the body is not valid UTF-8 text")
	}
	if err := checkVisible("the body", o.Body); err != nil {
		return err
	}
	if len(o.Body) > MaxMessageBody {
		return fmt.Errorf("the body is %d bytes; a message sent here holds at most %d", len(o.Body), MaxMessageBody)
	}
	if o.MessageID == "" {
		return errors.New("the message has no Message-ID")
	}
	for _, id := range append([]string{o.MessageID, o.InReplyTo}, o.References...) {
		if id != "" && !validMsgID(id) {
			return fmt.Errorf("%q is not a Message-ID that can be written in a header", id)
		}
	}
	return nil
}

// CheckAddress says in one sentence why addr cannot be an SMTP address here, or returns nil:
// it must be one ASCII local@domain with nothing around it (no name, no angle brackets, no
// space or control character).
func CheckAddress(addr string) error {
	at := strings.LastIndex(addr, "@")
	switch {
	case strings.ContainsAny(addr, "\r\n"):
		return fmt.Errorf("the address %q has a line break in it; give one address on one line", addr)
	case at < 1 || at == len(addr)-1:
		return fmt.Errorf("%q is not an email address; give one such as bob@example.org", addr)
	case strings.ContainsAny(addr, " \t<>,;\"()[]\\"):
		return fmt.Errorf("%q is not a plain email address; give it as local@domain, without spaces, quotes or brackets", addr)
	}
	for _, r := range addr {
		if r > unicode.MaxASCII || unicode.IsControl(r) {
			return fmt.Errorf("the address %q has a character outside plain ASCII; this build sends only to ASCII addresses", addr)
		}
	}
	return nil
}

// checkHeaderValue refuses a header value with a line break or another control character
// (tab allowed): a value is always one line, so nothing can be injected into the header.
func checkHeaderValue(what, v string) error {
	if strings.ContainsAny(v, "\r\n") {
		return fmt.Errorf("%s has a line break in it; a header value is one line", what)
	}
	for _, r := range v {
		if r != '\t' && unicode.IsControl(r) {
			return fmt.Errorf("%s has a control character (%U) in it; use printable text", what, r)
		}
		if reorders(r) {
			return fmt.Errorf("%s has a character that reorders the text around it (%U); leave it out", what, r)
		}
	}
	if !utf8.ValidString(v) {
		return fmt.Errorf("%s is not valid UTF-8 text", what)
	}
	return nil
}

// checkVisible refuses v when it holds a character no reader can see (readable.Hidden: a
// zero-width space, a tag character, a run of variation selectors, a carriage return alone):
// the owner approves the message as the card shows it, so the message carries nothing the
// card could not show.
func checkVisible(what, v string) error {
	rs := []rune(v)
	for i := range rs {
		if readable.Hidden(rs, i) {
			return fmt.Errorf("%s has a character the owner cannot see (%U) in it; leave it out, since the owner approves only what they can read", what, rs[i])
		}
	}
	return nil
}

// reorders reports whether r is a bidirectional override, embedding, isolate or mark: a
// character that makes the text around it read otherwise than it is.
func reorders(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// validMsgID reports whether id can stand between angle brackets in a header: printable
// ASCII with no space and no bracket.
func validMsgID(id string) bool {
	if len(id) == 0 || len(id) > 250 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c >= 0x7f || c == '<' || c == '>' {
			return false
		}
	}
	return true
}

// Render returns o as an RFC 5322 message from the address from, lines ending CRLF: From,
// To, Cc, Subject, Date, Message-ID, In-Reply-To and References when set, MIME-Version, and a
// text/plain; charset=utf-8 body, quoted-printable. There is never a Bcc header.
func (o Outgoing) Render(from string) ([]byte, error) {
	if err := o.Check(from); err != nil {
		return nil, err
	}
	var h mail.Header
	h.SetAddressList("From", []*mail.Address{{Address: from}})
	h.SetAddressList("To", o.To)
	h.SetAddressList("Cc", o.Cc)
	h.SetSubject(o.Subject)
	date := o.Date
	if date.IsZero() {
		date = time.Now()
	}
	h.SetDate(date)
	h.SetMessageID(o.MessageID)
	if o.InReplyTo != "" {
		h.SetMsgIDList("In-Reply-To", []string{o.InReplyTo})
	}
	h.SetMsgIDList("References", o.References)
	h.SetContentType("text/plain", map[string]string{"charset": "utf-8"})
	var buf bytes.Buffer
	w, err := mail.CreateSingleInlineWriter(&buf, h)
	if err != nil {
		return nil, fmt.Errorf("write the message's header: %w", err)
	}
	if _, err := w.Write([]byte(o.Body)); err != nil {
		return nil, fmt.Errorf("write the message's body: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("write the message's body: %w", err)
	}
	return buf.Bytes(), nil
}

// Sender sends messages over SMTP. Its zero value works.
type Sender struct {
	// Timeout bounds each step (the dial, the TLS handshake, each command and the server's
	// answer to the body); zero means [DefaultTimeout].
	Timeout time.Duration
	// TLSConfig is the base TLS configuration (certificates are always verified against the
	// account's SMTP host). Nil means the system's roots.
	TLSConfig *tls.Config
	// Now is the clock of the Date header when the message has none. Default: time.Now.
	Now func() time.Time
}

// Receipt is what a server said when it took a message.
type Receipt struct {
	MessageID  string   // the message's Message-ID, without angle brackets
	Recipients []string // every RCPT address the server accepted
	Reply      string   // the server's answer to the body (often a queue id)
}

// unknownError is a failure after the body began to be handed over and before the server's
// final answer: it matches [plugins.ErrOutcomeUnknown].
type unknownError struct {
	msg   string
	cause error
}

func (e *unknownError) Error() string        { return e.msg }
func (e *unknownError) Unwrap() error        { return e.cause }
func (e *unknownError) Is(target error) bool { return target == plugins.ErrOutcomeUnknown }

// Send sends o from a with a zero [Sender]; see [Sender.Send].
func Send(ctx context.Context, a Account, secrets Secrets, o Outgoing) (Receipt, error) {
	return (&Sender{}).Send(ctx, a, secrets, o)
}

// Send sends o from the account's address through its SMTP server, in its TLS mode: tls is
// TLS from the first byte; starttls refuses a server that does not offer STARTTLS;
// plain-loopback-only is only to a loopback address. When the server offers AUTH, the login
// is AUTH PLAIN with the app password from secrets; a server that offers none is accepted
// only on loopback. MAIL FROM is the account's address, then RCPT for every To, Cc and Bcc
// address, then DATA.
//
// The effect begins at DATA: just before it, Send calls [plugins.Dispatch] (under the
// executor, the effect ledger records the attempt then) and sends nothing if that fails. A
// failure before the body began to be written (the dial, the greeting, TLS, the login, MAIL,
// a refused recipient, DATA refused) is a plain error: nothing was sent. A server's refusal
// of the body (a 4xx or 5xx answer to it) is a plain error too. Any other failure once the
// body began (a write error, the deadline, the connection dropped, ctx cancelled before the
// server's final answer) is an error matching [plugins.ErrOutcomeUnknown]: the message may or
// may not have been sent. Every error is one sentence.
func (s *Sender) Send(ctx context.Context, a Account, secrets Secrets, o Outgoing) (Receipt, error) {
	if err := a.Validate(); err != nil {
		return Receipt{}, err
	}
	if err := a.usable(); err != nil {
		return Receipt{}, fmt.Errorf("email: nothing was sent: %w", err)
	}
	if o.Date.IsZero() {
		o.Date = s.now()
	}
	raw, err := o.Render(a.Address)
	if err != nil {
		return Receipt{}, fmt.Errorf("email: the message cannot be sent: %w", err)
	}
	rcpts := o.Recipients()
	c, conn, addr, err := s.dial(ctx, a)
	if err != nil {
		return Receipt{}, fmt.Errorf("email: nothing was sent: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	defer c.Close()
	fail := func(format string, args ...any) (Receipt, error) {
		if ctx.Err() != nil {
			return Receipt{}, fmt.Errorf("email: nothing was sent to %s: it was stopped before the message was handed over (%v)", addr, context.Cause(ctx))
		}
		return Receipt{}, fmt.Errorf("email: nothing was sent: "+format, args...)
	}
	if err := s.login(c, a, secrets, conn, addr); err != nil {
		return fail("%v", err)
	}
	if err := c.Mail(a.Address, nil); err != nil {
		return fail("the server %s refused the sender %s (%s)", addr, a.Address, smtpText(err))
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r, nil); err != nil {
			_ = c.Reset()
			return fail("the server %s refused the recipient %s (%s); take it out or correct it and draft again", addr, r, smtpText(err))
		}
	}
	if err := plugins.Dispatch(ctx); err != nil {
		_ = c.Reset()
		return fail("the send could not be recorded before it began (%v)", err)
	}
	w, err := c.Data()
	if err != nil {
		return fail("the server %s refused to take the message (%s)", addr, smtpText(err))
	}
	// From here the server may have the message: the body has its own deadline, and the
	// answer to it the client's submission timeout.
	_ = conn.SetDeadline(time.Now().Add(s.timeout()))
	_, werr := w.Write(raw)
	var resp *smtp.DataResponse
	if werr == nil {
		resp, werr = w.CloseWithResponse()
	}
	if werr != nil {
		// Only a 4xx or 5xx answer refuses the message; any other (a 2xx other than 250, a
		// 3xx) leaves its fate unknown, like no answer at all.
		if se, ok := errors.AsType[*smtp.SMTPError](werr); ok && se.Code >= 400 {
			return Receipt{}, fmt.Errorf("email: the server %s refused the message (%s), so it was not sent", addr, smtpText(se))
		}
		why := smtpText(werr)
		if ctx.Err() != nil {
			why = fmt.Sprintf("it was stopped: %v", context.Cause(ctx))
		}
		return Receipt{}, &unknownError{
			msg: fmt.Sprintf("email: the message <%s> was being handed to %s when the connection ended before the server's answer (%s); it may or may not have been sent, so it is not sent again: look for it in the Sent folder or ask a recipient",
				o.MessageID, addr, why),
			cause: werr,
		}
	}
	_ = c.Quit()
	return Receipt{MessageID: o.MessageID, Recipients: rcpts, Reply: resp.StatusText}, nil
}

func (s *Sender) timeout() time.Duration { return deadlineOr(s.Timeout) }

func (s *Sender) now() time.Time { return clockOr(s.Now) }

// dial connects to the account's SMTP server in its TLS mode and reads the greeting and the
// server's extensions (after STARTTLS, again); it returns the client, the TCP connection
// under it and its address.
func (s *Sender) dial(ctx context.Context, a Account) (*smtp.Client, net.Conn, string, error) {
	addr := net.JoinHostPort(a.SMTPHost, strconv.Itoa(a.SMTPPort))
	t := s.timeout()
	dctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, nil, addr, fmt.Errorf("could not reach the SMTP server %s within %s (%v); check the host, the port and the network", addr, t, err)
	}
	if a.SMTPTLS == PlainLoopbackOnly && !loopback(conn) {
		conn.Close()
		return nil, nil, addr, fmt.Errorf("the SMTP server %s answered from a non-loopback address, so plain SMTP is refused; use tls or starttls", addr)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.TLSConfig != nil {
		cfg = s.TLSConfig.Clone()
	}
	cfg.ServerName = a.SMTPHost
	var c *smtp.Client
	switch a.SMTPTLS {
	case TLS:
		tc := tls.Client(conn, cfg)
		if err := within(conn, t, func() error { return tc.HandshakeContext(dctx) }); err != nil {
			conn.Close()
			return nil, nil, addr, fmt.Errorf("the TLS handshake with %s failed (%v); check the port is the server's TLS port (465) and its certificate is valid for %s", addr, err, a.SMTPHost)
		}
		c = smtp.NewClient(tc)
	case StartTLS:
		// NewClientStartTLS reads the greeting, says EHLO and upgrades before anything else
		// is said; a server that does not offer STARTTLS is refused there.
		err := within(conn, t, func() (err error) { c, err = smtp.NewClientStartTLS(conn, cfg); return err })
		if err != nil {
			conn.Close()
			if strings.Contains(err.Error(), "support STARTTLS") {
				return nil, nil, addr, fmt.Errorf("the SMTP server %s does not offer STARTTLS, which the account's mode (starttls) requires before its password or any mail goes over the connection", addr)
			}
			return nil, nil, addr, fmt.Errorf("STARTTLS with %s failed (%s); check the port is the server's submission port (587) and its certificate is valid for %s", addr, smtpText(err), a.SMTPHost)
		}
	default:
		c = smtp.NewClient(conn)
	}
	c.CommandTimeout, c.SubmissionTimeout = t, t
	// The greeting and EHLO (after STARTTLS, the handshake and EHLO again).
	if err := within(conn, t, func() error { return c.Hello("localhost") }); err != nil {
		c.Close()
		return nil, nil, addr, fmt.Errorf("the SMTP server %s did not greet as one (%s); check it is an SMTP port and, for tls or starttls, that its certificate is valid for %s", addr, smtpText(err), a.SMTPHost)
	}
	if a.SMTPTLS != PlainLoopbackOnly {
		if _, ok := c.TLSConnectionState(); !ok {
			c.Close()
			return nil, nil, addr, fmt.Errorf("the connection to %s is not encrypted, so nothing is sent", addr)
		}
	}
	return c, conn, addr, nil
}

// within runs f with a watchdog that closes conn once t has passed (the SMTP client sets
// its own socket deadlines, minutes long, for the greeting): f then fails.
func within(conn net.Conn, t time.Duration, f func() error) error {
	timer := time.AfterFunc(t, func() { _ = conn.Close() })
	defer timer.Stop()
	return f()
}

// login authenticates with AUTH PLAIN when the server offers AUTH. A server that offers none
// is accepted only on loopback: a remote server that takes mail without a login is not the
// account's submission server.
func (s *Sender) login(c *smtp.Client, a Account, secrets Secrets, conn net.Conn, addr string) error {
	offered, mechs := c.Extension("AUTH")
	if !offered {
		if !loopback(conn) {
			return fmt.Errorf("the SMTP server %s offers no login (AUTH), and buddi sends only as the account's user; check the port is the server's submission port (587 or 465)", addr)
		}
		return nil // a server on this machine that takes mail without a login
	}
	if !c.SupportsAuth(sasl.Plain) {
		return fmt.Errorf("the SMTP server %s offers no AUTH PLAIN login (it offers %s), which is the only one this build speaks", addr, mechs)
	}
	if secrets == nil {
		return fmt.Errorf("there is no vault here to read the app password from (the entry %s)", a.PasswordSecret)
	}
	password, err := secrets.Get(a.PasswordSecret)
	if err != nil {
		return fmt.Errorf("the app password is not readable from the vault entry %s (%v); set it with buddi vault set %s", a.PasswordSecret, err, a.PasswordSecret)
	}
	if err := c.Auth(sasl.NewPlainClient("", a.Username, password)); err != nil {
		if _, refused := errors.AsType[*smtp.SMTPError](err); !refused {
			return fmt.Errorf("logging in to %s as %s got no answer (%s); check the server is reachable and answers on that port", addr, a.Username, smtpText(err))
		}
		return fmt.Errorf("logging in to %s as %s was refused (%s); check the username and the app password in the vault entry %s", addr, a.Username, smtpText(err), a.PasswordSecret)
	}
	return nil
}

// loopback reports whether conn's peer is a loopback address.
func loopback(conn net.Conn) bool {
	ip, ok := conn.RemoteAddr().(*net.TCPAddr)
	return ok && ip.IP.IsLoopback()
}

// smtpText turns an SMTP or network error into a clause.
func smtpText(err error) string {
	if se, ok := errors.AsType[*smtp.SMTPError](err); ok {
		return fmt.Sprintf("the server said %d %s", se.Code, strings.Join(strings.Fields(se.Message), " "))
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return "no answer before the deadline"
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
