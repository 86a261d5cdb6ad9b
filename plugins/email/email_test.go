package email

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"buddi/core/vault"
	"buddi/internal/mailtest"
	"buddi/internal/pgtest"
	"buddi/migrations"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture is a migrated database, a Dovecot and an account on it.
type fixture struct {
	srv    *mailtest.Server
	store  Store
	poller *Poller
	acct   Account
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := mailtest.Start(t)
	pool := pgtest.Pool(t)
	if _, err := migrations.Up(context.Background(), pool, nil, migrations.Set{Schema: Schema, FS: Migrations()}); err != nil {
		t.Fatal(err)
	}
	store := Store{Pool: pool, Key: testKey}
	acct, err := store.AddAccount(context.Background(), Account{
		Name: "test", Address: mailtest.User + "@example.org",
		IMAPHost: srv.Host, IMAPPort: srv.Port, IMAPTLS: PlainLoopbackOnly,
		SMTPHost: "127.0.0.1", SMTPPort: 25, SMTPTLS: PlainLoopbackOnly,
		Username: mailtest.User, PasswordSecret: "EMAIL_TEST",
	})
	if err != nil {
		t.Fatal(err)
	}
	v := vault.NewMemory(map[string]string{"EMAIL_TEST": mailtest.Password})
	return &fixture{srv: srv, store: store, acct: acct, poller: &Poller{Store: store, Secrets: v, Timeout: 10 * time.Second}}
}

func (f *fixture) poll(t *testing.T) PollResult {
	t.Helper()
	res, err := f.poller.Poll(context.Background(), f.acct)
	if err != nil {
		t.Fatalf("poll: %v\n%s", err, f.srv.Logs())
	}
	return res
}

func (f *fixture) subjects(t *testing.T) []string {
	t.Helper()
	msgs, err := f.store.Messages(context.Background(), f.acct.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, m.Subject)
	}
	slices.Sort(out)
	return out
}

func msg(n int, subject string) mailtest.Message {
	return mailtest.Message{From: "Bob <bob@example.org>", To: "alice@example.org", Subject: subject,
		MessageID: fmt.Sprintf("<%d@example.org>", n), Body: "body of " + subject}
}

// TestFirstPollStartsAtUIDNextMinusOne: mail already in the INBOX when the mailbox is first
// seen is not ingested; mail arriving after is.
func TestFirstPollStartsAtUIDNextMinusOne(t *testing.T) {
	f := newFixture(t)
	f.srv.Deliver(t, msg(1, "old"))
	res := f.poll(t)
	if !res.NewMailbox || res.Recorded != 0 || res.Mailbox.LastUID != 1 || res.UIDNext != 2 {
		t.Fatalf("first poll = %+v, want a new mailbox at UID 1 with nothing recorded", res)
	}
	f.srv.Deliver(t, msg(2, "new"))
	res = f.poll(t)
	if res.NewMailbox || res.Recorded != 1 || res.Mailbox.LastUID != 2 {
		t.Fatalf("second poll = %+v, want one message recorded and the cursor at 2", res)
	}
	if got := f.subjects(t); !slices.Equal(got, []string{"new"}) {
		t.Fatalf("recorded %q, want only the new message", got)
	}
	a, err := f.store.Account(context.Background(), "test")
	if err != nil || a.LastSync.IsZero() || a.LastError != "" {
		t.Fatalf("account after a good poll: %+v, %v; want last_sync set and no error", a, err)
	}
}

// TestBackfillLowersTheStart: a backfill of 2 reads the two newest messages already there.
func TestBackfillLowersTheStart(t *testing.T) {
	f := newFixture(t)
	for i := 1; i <= 3; i++ {
		f.srv.Deliver(t, msg(i, fmt.Sprintf("m%d", i)))
	}
	f.acct.Backfill = 2
	if res := f.poll(t); res.Recorded != 2 {
		t.Fatalf("poll with backfill 2 recorded %d, want 2", res.Recorded)
	}
	if got := f.subjects(t); !slices.Equal(got, []string{"m2", "m3"}) {
		t.Fatalf("recorded %q, want m2 and m3", got)
	}
}

// TestMessagesRecordedOnceAndLeftUnread: three deliveries are recorded once each with their
// envelope and body, a second poll records nothing, and no message gains \Seen.
func TestMessagesRecordedOnceAndLeftUnread(t *testing.T) {
	f := newFixture(t)
	f.poll(t) // an empty INBOX: the cursor at 0
	var uids []imap.UID
	for i := 1; i <= 3; i++ {
		uids = append(uids, f.srv.Deliver(t, msg(i, fmt.Sprintf("s%d", i))))
	}
	if res := f.poll(t); res.Recorded != 3 || res.Fetched != 3 {
		t.Fatalf("poll = %+v, want 3 fetched and recorded", res)
	}
	if res := f.poll(t); res.Recorded != 0 || res.Fetched != 0 {
		t.Fatalf("second poll = %+v, want nothing new", res)
	}
	msgs, err := f.store.Messages(context.Background(), f.acct.ID, 100)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("messages = %d, %v; want 3", len(msgs), err)
	}
	m := msgs[0] // the newest
	if m.Subject != "s3" || m.MessageID != "3@example.org" || m.From != "Bob <bob@example.org>" ||
		m.To != "alice@example.org" || m.Size == 0 || m.Date.IsZero() {
		t.Fatalf("newest message = %+v", m)
	}
	var raw []byte
	var truncated bool
	if err := f.store.Pool.QueryRow(context.Background(), `SELECT raw, truncated FROM email.bodies WHERE message = $1`, m.ID).Scan(&raw, &truncated); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "body of s3") || truncated || int64(len(raw)) != m.Size {
		t.Fatalf("body = %q (truncated %v), want the whole message of %d bytes", raw, truncated, m.Size)
	}
	for _, uid := range uids {
		if flags := f.srv.Flags(t, uid); slices.Contains(flags, imap.FlagSeen) {
			t.Fatalf("message %d is \\Seen after the poll: %v", uid, flags)
		}
	}
}

// TestUIDValidityChangeIsANewMailbox: after the server resets the INBOX, the poll makes a
// new mailbox row starting at now, keeps the old one with its messages and reads new mail.
func TestUIDValidityChangeIsANewMailbox(t *testing.T) {
	f := newFixture(t)
	f.poll(t)
	f.srv.Deliver(t, msg(1, "before"))
	first := f.poll(t)
	if first.Recorded != 1 {
		t.Fatalf("poll = %+v, want one recorded", first)
	}
	f.srv.ResetINBOX(t)
	f.srv.Deliver(t, msg(2, "during")) // UID 1 again, under the new UIDVALIDITY
	res := f.poll(t)
	if !res.NewMailbox || res.Mailbox.UIDValidity == first.Mailbox.UIDValidity || res.Recorded != 0 || res.Mailbox.LastUID != 1 {
		t.Fatalf("poll after the reset = %+v (old UIDVALIDITY %d), want a new mailbox starting at now", res, first.Mailbox.UIDValidity)
	}
	f.srv.Deliver(t, msg(3, "after"))
	if res := f.poll(t); res.Recorded != 1 {
		t.Fatalf("poll = %+v, want the new message recorded", res)
	}
	boxes, err := f.store.Mailboxes(context.Background(), f.acct.ID)
	if err != nil || len(boxes) != 2 || boxes[0].UIDValidity != first.Mailbox.UIDValidity || boxes[0].LastUID != 1 {
		t.Fatalf("mailboxes = %+v, %v; want the old row kept and a new one", boxes, err)
	}
	if got := f.subjects(t); !slices.Equal(got, []string{"after", "before"}) {
		t.Fatalf("recorded %q, want before and after", got)
	}
}

func oneSentence(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	s := err.Error()
	if strings.ContainsAny(s, "\n") || strings.Count(s, "; ") > 1 || !strings.Contains(s, "failed") {
		t.Fatalf("error is not one sentence: %q", s)
	}
}

// TestWrongPasswordIsOneSentenceAndStored: a refused login is said in one sentence, naming
// the vault entry but not the password, and kept as the account's last error.
func TestWrongPasswordIsOneSentenceAndStored(t *testing.T) {
	f := newFixture(t)
	f.poller.Secrets = vault.NewMemory(map[string]string{"EMAIL_TEST": "not-the-password"})
	_, err := f.poller.Poll(context.Background(), f.acct)
	oneSentence(t, err)
	if !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), "EMAIL_TEST") || strings.Contains(err.Error(), "not-the-password") {
		t.Fatalf("error = %q, want a refused login naming the vault entry and not the password", err)
	}
	a, aerr := f.store.Account(context.Background(), "test")
	if aerr != nil || a.LastError != err.Error() {
		t.Fatalf("last error = %q, %v; want %q", a.LastError, aerr, err)
	}
	if err := f.poller.Test(context.Background(), f.acct); err == nil {
		t.Fatal("Test passed with the wrong password")
	}
	f.poller.Secrets = vault.NewMemory(map[string]string{"EMAIL_TEST": mailtest.Password})
	f.poll(t)
	if a, _ := f.store.Account(context.Background(), "test"); a.LastError != "" {
		t.Fatalf("last error after a good poll = %q, want it cleared", a.LastError)
	}
	if err := f.poller.Test(context.Background(), f.acct); err != nil {
		t.Fatal(err)
	}
}

// TestUnreachableIsOneSentenceWithinTheDeadline: a closed port and a server that never
// greets both fail in one sentence, the second at the deadline.
func TestUnreachableIsOneSentenceWithinTheDeadline(t *testing.T) {
	pool := pgtest.Pool(t)
	if _, err := migrations.Up(context.Background(), pool, nil, migrations.Set{Schema: Schema, FS: Migrations()}); err != nil {
		t.Fatal(err)
	}
	store := Store{Pool: pool, Key: testKey}
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() { // accept and say nothing
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	const deadline = 500 * time.Millisecond
	p := &Poller{Store: store, Secrets: vault.NewMemory(map[string]string{"PW": "x"}), Timeout: deadline}
	for i, port := range []int{closedPort, silent.Addr().(*net.TCPAddr).Port} {
		a, err := store.AddAccount(context.Background(), Account{Name: fmt.Sprintf("a%d", i), Address: "a@example.org",
			IMAPHost: "127.0.0.1", IMAPPort: port, IMAPTLS: PlainLoopbackOnly, SMTPHost: "127.0.0.1", SMTPPort: 25,
			SMTPTLS: PlainLoopbackOnly, Username: "a", PasswordSecret: "PW"})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = p.Poll(context.Background(), a)
		took := time.Since(start)
		oneSentence(t, err)
		if took > deadline+2*time.Second {
			t.Fatalf("port %d: failed after %s, want about the deadline %s", port, took, deadline)
		}
		want := []string{"could not reach", "sent no greeting"}[i]
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("port %d: error %q, want %q", port, err, want)
		}
		if got, _ := store.Account(context.Background(), a.Name); got.LastError != err.Error() {
			t.Fatalf("last error = %q, want %q", got.LastError, err)
		}
	}
}

// TestAccountValidation: xoauth2, plain IMAP to a remote host and a password in place of a
// vault entry's name are refused in one sentence.
func TestAccountValidation(t *testing.T) {
	good := Account{Name: "work", Address: "me@example.org", IMAPHost: "imap.example.org", IMAPPort: 993,
		IMAPTLS: TLS, SMTPHost: "smtp.example.org", SMTPPort: 465, SMTPTLS: TLS, Username: "me", PasswordSecret: "EMAIL_WORK"}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(*Account){
		"xoauth2 is not supported": func(a *Account) { a.Auth = "xoauth2" },
		"not a loopback address":   func(a *Account) { a.IMAPTLS = PlainLoopbackOnly },
		"TLS mode":                 func(a *Account) { a.SMTPTLS = "none" },
		"account name":             func(a *Account) { a.Name = "Work Mail" },
		"names no vault entry":     func(a *Account) { a.PasswordSecret = "" },
	}
	for want, change := range cases {
		a := good
		change(&a)
		err := a.Validate()
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v", want, err)
		}
	}
}

// TestABurstIsReadInChunksOnce: 250 messages delivered at once are read in three FETCH
// chunks, each recorded once, the cursor at the last UID.
func TestABurstIsReadInChunksOnce(t *testing.T) {
	f := newFixture(t)
	f.poll(t)
	var burst []mailtest.Message
	for i := 1; i <= 250; i++ {
		burst = append(burst, msg(i, fmt.Sprintf("b%03d", i)))
	}
	uids := f.srv.DeliverAll(t, burst)
	start := time.Now()
	res := f.poll(t)
	if res.Recorded != 250 || res.Fetched != 250 || res.Mailbox.LastUID != uint32(uids[len(uids)-1]) {
		t.Fatalf("poll = %+v, want 250 recorded and the cursor at %d", res, uids[len(uids)-1])
	}
	t.Logf("250 messages read and recorded in %s", time.Since(start).Round(time.Millisecond))
	var n int
	if err := f.store.Pool.QueryRow(context.Background(), `SELECT count(DISTINCT message_id) FROM email.messages`).Scan(&n); err != nil || n != 250 {
		t.Fatalf("distinct messages = %d, %v; want 250", n, err)
	}
	if res := f.poll(t); res.Recorded != 0 {
		t.Fatalf("second poll recorded %d, want 0", res.Recorded)
	}
}

// TestCancelStopsAPollAtOnce: a poll stuck on a silent server ends when its context does,
// long before its deadline, and says it was stopped.
func TestCancelStopsAPollAtOnce(t *testing.T) {
	pool := pgtest.Pool(t)
	if _, err := migrations.Up(context.Background(), pool, nil, migrations.Set{Schema: Schema, FS: Migrations()}); err != nil {
		t.Fatal(err)
	}
	store := Store{Pool: pool, Key: testKey}
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := silent.Accept(); err == nil {
			accepted <- c
		}
	}()
	a, err := store.AddAccount(context.Background(), Account{Name: "stuck", Address: "a@example.org",
		IMAPHost: "127.0.0.1", IMAPPort: silent.Addr().(*net.TCPAddr).Port, IMAPTLS: PlainLoopbackOnly,
		SMTPHost: "127.0.0.1", SMTPPort: 25, SMTPTLS: PlainLoopbackOnly, Username: "a", PasswordSecret: "PW"})
	if err != nil {
		t.Fatal(err)
	}
	p := &Poller{Store: store, Secrets: vault.NewMemory(map[string]string{"PW": "x"}), Timeout: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() { _, err := p.Poll(ctx, a); done <- err }()
	c := <-accepted // the poll is waiting for a greeting that never comes
	defer c.Close()
	cancel()
	select {
	case err := <-done:
		oneSentence(t, err)
		if !strings.Contains(err.Error(), "stopped before it finished") {
			t.Fatalf("error = %q, want it to say the poll was stopped", err)
		}
		t.Logf("stopped %s after the start: %v", time.Since(start).Round(time.Millisecond), err)
		if got, _ := store.Account(context.Background(), "stuck"); got.LastError != "" {
			t.Fatalf("last error after a stop = %q, want none (a stop is not the account's failure)", got.LastError)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the poll did not end within 10 s of its context's end (its deadline is a minute)")
	}
}

// Subjects and names written in the charsets mail still arrives in (windows-1251, KOI8-R,
// ISO-2022-JP, GB2312, Big5, Shift_JIS as MIME words) are kept as the text they spell, not as
// the encoded words, so triage, the Email page and a reply's subject read them.
func TestHeadersInOtherCharsetsAreDecoded(t *testing.T) {
	f := newFixture(t)
	f.poll(t)
	cases := []struct{ subject, from, want, wantFrom string }{
		{"=?windows-1251?B?z/Do4uXy?=", "=?windows-1251?B?yOLg7SDP5fLw7uI=?= <ivan@example.org>", "Привет", "Иван Петров <ivan@example.org>"},
		{"=?KOI8-R?B?8NLJ18XU?=", "bob@example.org", "Привет", "bob@example.org"},
		{"=?ISO-2022-JP?B?GyRCJDMkcyRLJEEkTxsoQg==?=", "=?ISO-2022-JP?B?GyRCOzNFRBsoQg==?= <yamada@example.org>", "こんにちは", "山田 <yamada@example.org>"},
		{"=?GB2312?B?xOO6ww==?=", "bob@example.org", "你好", "bob@example.org"},
		{"=?Big5?B?p0Gmbg==?=", "bob@example.org", "你好", "bob@example.org"},
		{"=?Shift_JIS?B?grGC8YLJgr+CzQ==?=", "bob@example.org", "こんにちは", "bob@example.org"},
	}
	for i, c := range cases {
		f.srv.Deliver(t, mailtest.Message{From: c.from, To: "alice@example.org", Subject: c.subject,
			MessageID: fmt.Sprintf("<cs%d@example.org>", i), Body: "hello"})
	}
	f.poll(t)
	msgs, err := f.store.Messages(context.Background(), f.acct.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Message{}
	for _, m := range msgs {
		got[m.MessageID] = m
	}
	for i, c := range cases {
		m := got[fmt.Sprintf("cs%d@example.org", i)]
		if m.Subject != c.want || m.From != c.wantFrom {
			t.Errorf("%s from %s: stored %q from %q, want %q from %q", c.subject, c.from, m.Subject, m.From, c.want, c.wantFrom)
		}
		if line := HeaderLine(c.subject); line != c.want {
			t.Errorf("HeaderLine(%s) = %q, want %q", c.subject, line, c.want)
		}
	}
}
