package email

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"buddi/core/vault"
)

// TLS modes of a server.
const (
	TLS               = "tls"                 // TLS from the first byte (IMAPS 993, SMTPS 465)
	StartTLS          = "starttls"            // plaintext greeting, upgraded before login
	PlainLoopbackOnly = "plain-loopback-only" // no TLS, only to a loopback address
)

// AuthAppPassword is the only auth mode of this build.
const AuthAppPassword = "app-password"

// Account is one row of email.accounts.
type Account struct {
	ID       int64  // the row's id
	Name     string // the owner's name for it: lower case letters, digits, - and _
	Address  string // the address mail is received at and sent from
	IMAPHost string // the IMAP server's host name or address
	IMAPPort int    // its port
	IMAPTLS  string // [TLS], [StartTLS] or [PlainLoopbackOnly]
	SMTPHost string // the SMTP server's host name or address
	SMTPPort int    // its port
	SMTPTLS  string // [TLS], [StartTLS] or [PlainLoopbackOnly]
	Username string // the login name on both servers
	Auth     string // [AuthAppPassword]; empty means it
	// PasswordSecret is the NAME of the vault entry holding the app password.
	PasswordSecret string
	// Backfill is how many messages before UIDNEXT a new mailbox starts at (0: at now).
	Backfill int
	// LastSync is when a poll last succeeded (zero: never).
	LastSync time.Time
	// LastError is the sentence of the last poll that failed, empty once one succeeds again.
	LastError string
	// Refused says why the row is not honoured ("" when its seal checks): its app password
	// is never sent, and the owner adding the account again re-creates it.
	Refused string

	// sealed is set by the Store on a row whose seal checks; a login needs it, so an
	// account that did not come from buddi's own records is never logged in to.
	sealed bool
}

// purposeAccount is the seal's purpose for an account row.
const purposeAccount = "email.account"

// fields are what an account's seal covers: everything that decides where its app
// password goes and what is read and sent under it.
func (a Account) fields() []string {
	return []string{a.Name, a.Address, a.IMAPHost, strconv.Itoa(a.IMAPPort), a.IMAPTLS, a.SMTPHost, strconv.Itoa(a.SMTPPort), a.SMTPTLS,
		a.Username, a.Auth, a.PasswordSecret, strconv.Itoa(a.Backfill)}
}

// Fix is what the owner does about an account that is refused.
func Fix(name string) string {
	return fmt.Sprintf("check its servers, then add it again with buddi email add %s", name)
}

// usable returns nil for an account whose seal checked, else why its password is not sent,
// in one sentence.
func (a Account) usable() error {
	if a.sealed {
		return nil
	}
	why := a.Refused
	if why == "" {
		why = "it was not read from buddi's own records"
	}
	return fmt.Errorf("the account %s is refused and its app password is not sent, because %s; %s", a.Name, why, Fix(a.Name))
}

var accountName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// Validate says in one sentence what is wrong with a, or returns nil.
func (a Account) Validate() error {
	if strings.EqualFold(a.Auth, "xoauth2") || strings.EqualFold(a.Auth, "oauth2") {
		return fmt.Errorf("email: xoauth2 is not supported in this build; create an app password at your provider and add the account with it")
	}
	if a.Auth != "" && a.Auth != AuthAppPassword {
		return fmt.Errorf("email: auth %q is not known; the only auth mode is %s", a.Auth, AuthAppPassword)
	}
	if !accountName.MatchString(a.Name) {
		return fmt.Errorf("email: account name %q is not allowed; use up to 40 lower case letters, digits, - and _, starting with a letter or digit", a.Name)
	}
	if at := strings.LastIndex(a.Address, "@"); at < 1 || at == len(a.Address)-1 || strings.ContainsAny(a.Address, " <>\r\n") {
		return fmt.Errorf("email: %q is not an email address; give one such as you@example.org", a.Address)
	}
	if a.Username == "" {
		return fmt.Errorf("email: the account %s has no username; give the login name of its mail servers", a.Name)
	}
	if a.PasswordSecret == "" {
		return fmt.Errorf("email: the account %s names no vault entry for its app password; give the entry's name", a.Name)
	}
	if err := vault.CheckName(a.PasswordSecret); err != nil {
		return fmt.Errorf("email: the account %s's app password entry is not a vault name (%v)", a.Name, err)
	}
	if a.Backfill < 0 {
		return fmt.Errorf("email: backfill %d is negative; give 0 to start at the newest message or a count of older messages to read", a.Backfill)
	}
	if err := checkServer("IMAP", a.IMAPHost, a.IMAPPort, a.IMAPTLS); err != nil {
		return err
	}
	return checkServer("SMTP", a.SMTPHost, a.SMTPPort, a.SMTPTLS)
}

func checkServer(kind, host string, port int, mode string) error {
	if host == "" || strings.ContainsAny(host, " /\r\n") {
		return fmt.Errorf("email: the %s host %q is not a host name; give one such as imap.example.org", kind, host)
	}
	if port < 1 || port > 65535 {
		return fmt.Errorf("email: the %s port %d is out of range; give a port from 1 to 65535", kind, port)
	}
	switch mode {
	case TLS, StartTLS:
	case PlainLoopbackOnly:
		if !isLoopbackName(host) {
			return fmt.Errorf("email: the %s host %s is not a loopback address, so %s is refused; use tls or starttls", kind, host, PlainLoopbackOnly)
		}
	default:
		return fmt.Errorf("email: the %s TLS mode %q is not known; use tls, starttls or %s", kind, mode, PlainLoopbackOnly)
	}
	return nil
}

// isLoopbackName reports whether host is "localhost" or a loopback IP literal.
func isLoopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
