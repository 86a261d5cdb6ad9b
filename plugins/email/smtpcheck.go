package email

import (
	"context"
	"fmt"
)

// Check connects to the account's SMTP server as [Sender.Send] would and sends nothing: the
// account's TLS mode (tls from the first byte; starttls, refusing a server that does not
// offer STARTTLS; plain-loopback-only to a loopback peer only), EHLO, then AUTH PLAIN with
// the app password from secrets when the server offers AUTH (a server offering none is
// accepted only on loopback), then QUIT. No MAIL, RCPT or DATA is ever said. Every step is
// under the sender's deadline; a failure is one sentence saying which step failed and what
// to check.
func (s *Sender) Check(ctx context.Context, a Account, secrets Secrets) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if err := a.usable(); err != nil {
		return fmt.Errorf("email: testing the SMTP server of %s failed: %w", a.Name, err)
	}
	fail := func(err error) error {
		if ctx.Err() != nil {
			return fmt.Errorf("email: testing the SMTP server of %s was stopped before it finished (%v)", a.Name, context.Cause(ctx))
		}
		return fmt.Errorf("email: testing the SMTP server of %s failed: %w", a.Name, err)
	}
	c, conn, addr, err := s.dial(ctx, a)
	if err != nil {
		return fail(err)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	defer c.Close()
	if err := s.login(c, a, secrets, conn, addr); err != nil {
		return fail(err)
	}
	if err := c.Quit(); err != nil {
		return fail(fmt.Errorf("the SMTP server %s did not answer QUIT after the login (%s); check it is an SMTP server that ends a session cleanly", addr, smtpText(err)))
	}
	return nil
}
