package mailtest

import (
	"errors"
	"net/smtp"
	"net/textproto"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
)

// TestSMTPDeliversToIMAP sends a message over SMTP to Address and finds it, once, in the
// Dovecot user's INBOX over IMAP; a message to BobAddress lands in Bob's Maildir.
func TestSMTPDeliversToIMAP(t *testing.T) {
	s := Start(t)
	began := time.Now()
	p := s.StartSMTP(t)
	t.Logf("postfix listened on %s %s after its start", p.Addr(), time.Since(began).Round(time.Millisecond))

	m := Message{From: BobAddress, To: Address, Subject: "over smtp", MessageID: "<smtp-1@buddi.test>", Body: "hello alice\n"}
	sent := time.Now()
	if err := smtp.SendMail(p.Addr(), nil, BobAddress, []string{Address}, m.Bytes()); err != nil {
		t.Fatalf("send to %s: %v\n%s", Address, err, p.Logs())
	}
	p.Drain(t)
	t.Logf("delivered %s after the send", time.Since(sent).Round(time.Millisecond))

	c := s.Dial(t)
	defer c.Close()
	sel, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		t.Fatalf("examine INBOX: %v", err)
	}
	if sel.NumMessages != 1 {
		t.Fatalf("INBOX holds %d messages after one send, want 1\n%s", sel.NumMessages, p.Logs())
	}
	msgs, err := c.Fetch(imap.SeqSetNum(1), &imap.FetchOptions{Envelope: true}).Collect()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("fetch message 1: %d messages, %v", len(msgs), err)
	}
	env := msgs[0].Envelope
	if env.MessageID != "smtp-1@buddi.test" || env.Subject != "over smtp" {
		t.Fatalf("INBOX message: Message-ID %q, Subject %q; want smtp-1@buddi.test, over smtp", env.MessageID, env.Subject)
	}

	reply := Message{From: Address, To: BobAddress, Subject: "Re: over smtp", MessageID: "<smtp-2@buddi.test>", Body: "hello bob\n"}
	if err := smtp.SendMail(p.Addr(), nil, Address, []string{BobAddress}, reply.Bytes()); err != nil {
		t.Fatalf("send to %s: %v\n%s", BobAddress, err, p.Logs())
	}
	p.Drain(t)
	if got := p.WaitMail(t, BobAddress, 1); len(got) != 1 || !strings.Contains(string(got[0]), "Message-ID: <smtp-2@buddi.test>") {
		t.Fatalf("Bob's Maildir holds %d messages, want the reply once:\n%s", len(got), got)
	}
	if n := len(p.WaitMail(t, Address, 1)); n != 1 {
		t.Fatalf("alice's Maildir holds %d messages after the reply to Bob, want 1", n)
	}
}

// TestSMTPRefusesOthers shows that a recipient in another domain is refused at RCPT, from a
// loopback client too (no open relay), and so is an unknown user of the test domain.
func TestSMTPRefusesOthers(t *testing.T) {
	s := Start(t)
	p := s.StartSMTP(t)
	c, err := smtp.Dial(p.Addr())
	if err != nil {
		t.Fatalf("dial %s: %v", p.Addr(), err)
	}
	defer c.Close()
	if err := c.Mail(Address); err != nil {
		t.Fatalf("MAIL FROM: %v", err)
	}
	for rcpt, code := range map[string]int{"eve@example.org": 554, "carol@" + Domain: 550} {
		err := c.Rcpt(rcpt)
		var te *textproto.Error
		if !errors.As(err, &te) || te.Code != code {
			t.Fatalf("RCPT TO %s: %v, want a %d refusal\n%s", rcpt, err, code, p.Logs())
		}
	}
	if err := c.Quit(); err != nil {
		t.Fatalf("QUIT: %v", err)
	}
	if n, err := p.queued(); err != nil || n != 0 {
		t.Fatalf("queue holds %d messages (%v) after only refused recipients, want 0", n, err)
	}
}

// TestSMTPStopLeavesNothing shows that stopping ends the master and its daemons and removes
// the directory.
func TestSMTPStopLeavesNothing(t *testing.T) {
	s := Start(t)
	began := time.Now()
	p := s.StartSMTP(t)
	t.Logf("postfix greeted on %s %s after its start", p.Addr(), time.Since(began).Round(time.Millisecond))
	master, dir := p.master, p.Dir
	if master <= 0 {
		t.Fatalf("master pid %d", master)
	}
	if n := liveInGroup(master); n == 0 {
		t.Fatalf("no running process found in the master's group %d before stop", master)
	}
	began = time.Now()
	p.stop()
	t.Logf("postfix stopped in %s", time.Since(began).Round(time.Millisecond))
	if n := liveInGroup(master); n != 0 {
		t.Fatalf("%d processes of the master's group %d run on after stop", n, master)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the directory %s is left after stop: %v", dir, err)
	}
}
