package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"buddi/internal/timezone"
	"buddi/plugins/email"
)

type emailCmd struct {
	Add  emailAddCmd  `cmd:"" help:"Add an email account; its app password is read from standard input into the vault."`
	List emailListCmd `cmd:"" help:"List the email accounts with their last sync and last error."`
	Test emailTestCmd `cmd:"" help:"Log in to an account's IMAP server and examine its INBOX, then to its SMTP server, sending and changing nothing."`
}

type emailAddCmd struct {
	Name           string `arg:"" help:"The account's name, like work (lower case letters, digits, - and _)."`
	Address        string `required:"" help:"The account's email address."`
	IMAPHost       string `name:"imap-host" required:"" help:"The IMAP server's host."`
	IMAPPort       int    `name:"imap-port" default:"993" help:"The IMAP server's port."`
	IMAPTLS        string `name:"imap-tls" default:"tls" enum:"tls,starttls,plain-loopback-only" help:"tls, starttls, or plain-loopback-only (a loopback host only)."`
	SMTPHost       string `name:"smtp-host" required:"" help:"The SMTP server's host."`
	SMTPPort       int    `name:"smtp-port" default:"465" help:"The SMTP server's port."`
	SMTPTLS        string `name:"smtp-tls" default:"tls" enum:"tls,starttls,plain-loopback-only" help:"tls, starttls, or plain-loopback-only (a loopback host only)."`
	Username       string `help:"The login name on both servers (default: the address)."`
	Auth           string `default:"app-password" help:"The auth mode: app-password (xoauth2 is not supported in this build)."`
	PasswordSecret string `name:"password-secret" help:"The vault entry to keep the app password in (default: EMAIL_<NAME>)."`
	Backfill       int    `default:"0" env:"EMAIL_BACKFILL" help:"How many existing messages the first poll reads (0: only mail arriving from now); EMAIL_BACKFILL sets the default."`
	JSON           bool   `help:"Print JSON: {ok, name, address, password_secret} (never the password)."`
}

// Run validates the account, stores the app password from standard input in the vault and
// records the account; the password never reaches the database.
func (c emailAddCmd) Run(env *runEnv) error {
	secret := c.PasswordSecret
	if secret == "" {
		secret = "EMAIL_" + strings.ToUpper(strings.NewReplacer("-", "_").Replace(c.Name))
	}
	username := c.Username
	if username == "" {
		username = c.Address
	}
	a := email.Account{Name: c.Name, Address: c.Address, IMAPHost: c.IMAPHost, IMAPPort: c.IMAPPort, IMAPTLS: c.IMAPTLS,
		SMTPHost: c.SMTPHost, SMTPPort: c.SMTPPort, SMTPTLS: c.SMTPTLS, Username: username, Auth: c.Auth,
		PasswordSecret: secret, Backfill: c.Backfill}
	if err := a.Validate(); err != nil {
		return &exitError{code: 2, err: err}
	}
	key, src, err := openSealed(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	store := email.Store{Pool: src.Pool, Key: key}
	if old, err := store.Account(env.ctx, c.Name); err == nil && old.Refused == "" {
		return &exitError{code: 2, err: fmt.Errorf("an email account named %s already exists; choose another name", c.Name)}
	} else if err != nil && !errors.Is(err, email.ErrNoAccount) {
		return fmt.Errorf("read email.accounts (is the email plugin's schema migrated? buddi db migrate does it): %w", err)
	}
	v, err := openVault()
	if err != nil {
		return err
	}
	password, err := readSecret(os.Stdin)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if err := v.Set(secret, password); err != nil {
		return vaultExit(err)
	}
	if _, err := store.AddAccount(env.ctx, a); err != nil {
		return err
	}
	return report(env, c.JSON, acted(map[string]any{"name": a.Name, "address": a.Address, "password_secret": secret}),
		"email account %s (%s) added; its app password is in the vault as %s", a.Name, a.Address, secret)
}

type emailListCmd struct {
	JSON bool `help:"Print JSON: [{name, address, imap, smtp, username, password_secret, backfill, last_sync?, last_error, refused?}]."`
}

type emailAccountRow struct {
	Name           string     `json:"name"`
	Address        string     `json:"address"`
	IMAP           string     `json:"imap"`
	SMTP           string     `json:"smtp"`
	Username       string     `json:"username"`
	PasswordSecret string     `json:"password_secret"`
	Backfill       int        `json:"backfill"`
	LastSync       *time.Time `json:"last_sync,omitempty"`
	LastError      string     `json:"last_error"`
	// Refused says why the account is not used ("" when its seal checks).
	Refused string `json:"refused,omitempty"`
}

// Run lists the accounts.
func (c emailListCmd) Run(env *runEnv) error {
	key, src, err := openSealed(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	accounts, err := email.Store{Pool: src.Pool, Key: key}.Accounts(env.ctx)
	if err != nil {
		return fmt.Errorf("read email.accounts (is the email plugin's schema migrated? buddi db migrate does it): %w", err)
	}
	out := make([]emailAccountRow, 0, len(accounts))
	for _, a := range accounts {
		r := emailAccountRow{Name: a.Name, Address: a.Address, IMAP: fmt.Sprintf("%s:%d %s", a.IMAPHost, a.IMAPPort, a.IMAPTLS),
			SMTP: fmt.Sprintf("%s:%d %s", a.SMTPHost, a.SMTPPort, a.SMTPTLS), Username: a.Username,
			PasswordSecret: a.PasswordSecret, Backfill: a.Backfill, LastError: a.LastError, Refused: a.Refused}
		if a.Refused != "" {
			// What the owner reads first: the account is not used, and how to mend it.
			r.LastError = fmt.Sprintf("refused, its app password never sent: %s; %s", a.Refused, email.Fix(a.Name))
		}
		if !a.LastSync.IsZero() {
			t := a.LastSync
			r.LastSync = &t
		}
		out = append(out, r)
	}
	if c.JSON {
		return writeJSON(env, out)
	}
	if len(out) == 0 {
		_, err := fmt.Fprintln(env.stdout, "No email accounts; buddi email add adds one.")
		return err
	}
	zone := timezone.Local().Location()
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tADDRESS\tIMAP\tLAST SYNC\tLAST ERROR")
	for _, r := range out {
		sync := "never"
		if r.LastSync != nil {
			sync = r.LastSync.In(zone).Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Address, r.IMAP, sync, r.LastError)
	}
	return tw.Flush()
}

type emailTestCmd struct {
	Name    string        `arg:"" help:"The account's name."`
	Timeout time.Duration `default:"20s" help:"The deadline of each network call."`
	JSON    bool          `help:"Print JSON: {ok, name, imap, smtp}, imap and smtp each \"ok\" or the sentence of what failed."`
}

// Run checks the account's IMAP server (logs in and examines INBOX read-only) and then its
// SMTP server (logs in as a send would and quits before any MAIL, so nothing is sent). Each
// is said as ok or as one sentence of what failed; a failure of either exits 1.
func (c emailTestCmd) Run(env *runEnv) error {
	key, src, err := openSealed(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	store := email.Store{Pool: src.Pool, Key: key}
	a, err := store.Account(env.ctx, c.Name)
	if errors.Is(err, email.ErrNoAccount) {
		return &exitError{code: 2, err: err}
	}
	if err != nil {
		return err
	}
	v, err := openVault()
	if err != nil {
		return err
	}
	// Each server gets its own budget: a few steps, each under the deadline.
	ctx, cancel := context.WithTimeout(env.ctx, 6*c.Timeout)
	imapErr := (&email.Poller{Store: store, Secrets: v, Timeout: c.Timeout}).Test(ctx, a)
	cancel()
	ctx, cancel = context.WithTimeout(env.ctx, 6*c.Timeout)
	smtpErr := (&email.Sender{Timeout: c.Timeout}).Check(ctx, a, v)
	cancel()
	failed := imapErr != nil || smtpErr != nil
	if c.JSON {
		said := func(err error) string {
			if err != nil {
				return err.Error()
			}
			return "ok"
		}
		out := map[string]any{"ok": !failed, "name": a.Name, "imap": said(imapErr), "smtp": said(smtpErr)}
		if err := writeJSON(env, out); err != nil {
			return err
		}
	} else {
		for _, r := range []struct {
			kind, host string
			port       int
			err        error
		}{{"IMAP", a.IMAPHost, a.IMAPPort, imapErr}, {"SMTP", a.SMTPHost, a.SMTPPort, smtpErr}} {
			if r.err != nil {
				sayError(env.stderr, r.err)
				continue
			}
			if _, err := fmt.Fprintf(env.stdout, "%s ok (%s@%s)\n", r.kind, a.Username, net.JoinHostPort(r.host, strconv.Itoa(r.port))); err != nil {
				return err
			}
		}
	}
	if failed {
		return &exitError{code: 1}
	}
	return nil
}
