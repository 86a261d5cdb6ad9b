package email

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"buddi/core/seal"
	"buddi/core/vault"
)

// testKey is the installation key of the package's tests.
var testKey, _ = seal.New(bytes.Repeat([]byte{5}, 32))

// listener is a loopback port that counts the connections made to it and says nothing.
func listener(t *testing.T) (port int, accepted *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	accepted = &atomic.Int32{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port, accepted
}

// TestAnAccountChangedInTheDatabaseIsNeverLoggedInTo: a database writer who points a
// working account somewhere else (its servers, ports, TLS modes, login, vault entry or
// address) gets no login and no app password: the poll, the IDLE watch's login, the SMTP
// check and the send all refuse before any connection, in one sentence saying how to
// re-create the account, kept as the account's last error.
func TestAnAccountChangedInTheDatabaseIsNeverLoggedInTo(t *testing.T) {
	f := newFixture(t)
	f.poll(t) // it works as added
	port, accepted := listener(t)
	ctx := context.Background()
	for _, change := range []string{
		"imap_port = " + strconv.Itoa(port),
		"imap_host = 'localhost', imap_port = " + strconv.Itoa(port),
		"imap_tls = 'starttls'",
		"smtp_port = " + strconv.Itoa(port),
		"smtp_host = 'localhost'",
		"smtp_tls = 'starttls'",
		"username = 'someone'",
		"password_secret = 'OTHER_SECRET'",
		"address = 'thief@example.org'",
		"backfill = 100000",
	} {
		t.Run(change, func(t *testing.T) {
			if _, err := f.store.Pool.Exec(ctx, `UPDATE email.accounts SET `+change+` WHERE name = 'test'`); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if _, err := f.store.Pool.Exec(ctx, `UPDATE email.accounts SET imap_host = $1, imap_port = $2, imap_tls = 'plain-loopback-only',
					smtp_host = '127.0.0.1', smtp_port = 25, smtp_tls = 'plain-loopback-only', username = $3, password_secret = 'EMAIL_TEST',
					address = $4, backfill = 0 WHERE name = 'test'`, f.acct.IMAPHost, f.acct.IMAPPort, f.acct.Username, f.acct.Address); err != nil {
					t.Fatal(err)
				}
			})
			a, err := f.store.Account(ctx, "test")
			if err != nil {
				t.Fatal(err)
			}
			if a.Refused != seal.WhyBadSeal {
				t.Fatalf("Refused = %q, want %q", a.Refused, seal.WhyBadSeal)
			}
			logins := f.srv.Logs()
			_, perr := f.poller.Poll(ctx, a)
			werr := f.poller.watch(ctx, a, make(chan struct{}, 1))
			cerr := (&Sender{Timeout: 5 * time.Second}).Check(ctx, a, f.poller.Secrets)
			_, serr := (&Sender{Timeout: 5 * time.Second}).Send(ctx, a, f.poller.Secrets, outgoing(t))
			for what, err := range map[string]error{"poll": perr, "watch": werr, "check": cerr, "send": serr} {
				if err == nil || !strings.Contains(err.Error(), "refused and its app password is not sent") ||
					!strings.Contains(err.Error(), "buddi email add test") || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s: err = %v, want one sentence refusing the account and saying how to add it again", what, err)
				}
			}
			if n := accepted.Load(); n != 0 {
				t.Fatalf("the changed account's server was reached %d times", n)
			}
			if got := f.srv.Logs(); strings.Count(got, "Login: user=") != strings.Count(logins, "Login: user=") {
				t.Fatalf("Dovecot saw a login for the changed account:\n%s", strings.TrimPrefix(got, logins))
			}
			stored, err := f.store.Account(ctx, "test")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stored.LastError, "refused") {
				t.Fatalf("last error %q, want the refusal", stored.LastError)
			}
		})
	}
}

// TestAnUnsealedAccountIsReplacedByAddingItAgain: a row written straight into the database
// carries no seal and is refused; adding the account again replaces it in place (its id,
// so its mailboxes and messages, kept) and it is read; adding a sealed one again is refused
// as a duplicate; a store without a key refuses every account and adds none.
func TestAnUnsealedAccountIsReplacedByAddingItAgain(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var id int64
	if err := f.store.Pool.QueryRow(ctx, `INSERT INTO email.accounts (name, address, imap_host, imap_port, imap_tls, smtp_host, smtp_port,
		smtp_tls, username, password_secret) VALUES ('planted', 'a@example.org', $1, $2, 'plain-loopback-only', '127.0.0.1', 25,
		'plain-loopback-only', $3, 'EMAIL_TEST') RETURNING id`, f.srv.Host, f.srv.Port, f.acct.Username).Scan(&id); err != nil {
		t.Fatal(err)
	}
	planted, err := f.store.Account(ctx, "planted")
	if err != nil {
		t.Fatal(err)
	}
	if planted.Refused != seal.WhyNoSeal {
		t.Fatalf("Refused = %q, want %q", planted.Refused, seal.WhyNoSeal)
	}
	if _, err := f.poller.Poll(ctx, planted); err == nil || !strings.Contains(err.Error(), "carries no seal") {
		t.Fatalf("poll of the planted row: %v, want it refused", err)
	}
	again := f.acct
	again.ID, again.Name, again.Address = 0, "planted", "a@example.org"
	added, err := f.store.AddAccount(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	if added.ID != id {
		t.Fatalf("adding it again made row %d, want the planted row %d replaced", added.ID, id)
	}
	read, err := f.store.Account(ctx, "planted")
	if err != nil {
		t.Fatal(err)
	}
	if read.Refused != "" || read.LastError != "" {
		t.Fatalf("after adding it again: refused %q, last error %q", read.Refused, read.LastError)
	}
	if _, err := f.poller.Poll(ctx, read); err != nil {
		t.Fatalf("poll after adding it again: %v", err)
	}
	if _, err := f.store.AddAccount(ctx, again); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("adding a sealed account again: %v, want it refused as a duplicate", err)
	}

	keyless := Store{Pool: f.store.Pool}
	all, err := keyless.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range all {
		if a.Refused == "" {
			t.Fatalf("a store without a key honours %s", a.Name)
		}
		p := &Poller{Store: keyless, Secrets: vault.NewMemory(map[string]string{"EMAIL_TEST": "x"}), Timeout: 5 * time.Second}
		if _, err := p.Poll(ctx, a); err == nil {
			t.Fatalf("a store without a key polled %s", a.Name)
		}
	}
	other := f.acct
	other.ID, other.Name = 0, "another"
	if _, err := keyless.AddAccount(ctx, other); !errors.Is(err, ErrNoKey) {
		t.Fatalf("adding without a key: %v, want ErrNoKey", err)
	}
	if _, err := (&Sender{}).Send(ctx, Account{Name: "literal", Address: "a@example.org", IMAPHost: "127.0.0.1", IMAPPort: 1, IMAPTLS: PlainLoopbackOnly,
		SMTPHost: "127.0.0.1", SMTPPort: 1, SMTPTLS: PlainLoopbackOnly, Username: "a", PasswordSecret: "EMAIL_TEST"}, nil, outgoing(t)); err == nil ||
		!strings.Contains(err.Error(), "not read from buddi's own records") {
		t.Fatalf("an account not read from the store: %v, want it refused", err)
	}
}

// TestASealMovedToAnotherAccountDoesNotCheck: a database writer who copies a working
// account's seal onto another row (or onto the same row after pointing it elsewhere) gets a
// refused account: the seal binds every field it covers.
func TestASealMovedToAnotherAccountDoesNotCheck(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	other := f.acct
	other.ID, other.Name, other.IMAPHost = 0, "other", "localhost"
	if _, err := f.store.AddAccount(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Pool.Exec(ctx, `UPDATE email.accounts SET seal = (SELECT seal FROM email.accounts WHERE name = 'test') WHERE name = 'other'`); err != nil {
		t.Fatal(err)
	}
	moved, err := f.store.Account(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	if moved.Refused != seal.WhyBadSeal {
		t.Fatalf("a seal copied from another account: Refused = %q, want %q", moved.Refused, seal.WhyBadSeal)
	}
	if _, err := f.poller.Poll(ctx, moved); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("poll with a copied seal: %v, want it refused", err)
	}
	// Swapping the names of two sealed rows leaves both refused.
	if _, err := f.store.Pool.Exec(ctx, `UPDATE email.accounts SET name = CASE name WHEN 'test' THEN 'swap' ELSE 'test' END WHERE name IN ('test', 'other');
		UPDATE email.accounts SET name = 'other' WHERE name = 'swap'`); err != nil {
		t.Fatal(err)
	}
	all, err := f.store.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range all {
		if a.Refused == "" {
			t.Fatalf("after the rows' names were swapped, %s is honoured", a.Name)
		}
	}
}
