package email

import (
	"context"
	"slices"
	"testing"

	"github.com/emersion/go-imap/v2"

	"buddi/internal/mailtest"
)

// What the owner's mail client does to a message (read it, flag it) is what buddi keeps at
// its next poll, read incrementally with CONDSTORE (Dovecot offers it); buddi sets nothing.
func TestFlagsFollowTheOwnersClient(t *testing.T) {
	f := newFixture(t)
	f.poll(t)
	uids := f.srv.DeliverAll(t, []mailtest.Message{msg(1, "to read"), msg(2, "to flag"), msg(3, "left alone")})
	f.poll(t)
	flags := func() map[string][]string {
		t.Helper()
		msgs, err := f.store.Messages(context.Background(), f.acct.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, m := range msgs {
			out[m.Subject] = m.Flags
		}
		return out
	}
	if got := flags(); len(got["to read"]) != 0 || len(got["to flag"]) != 0 {
		t.Fatalf("flags before the owner did anything: %v", got)
	}
	var modseq int64
	if err := f.store.Pool.QueryRow(context.Background(), `SELECT highest_modseq FROM email.mailboxes`).Scan(&modseq); err != nil || modseq == 0 {
		t.Fatalf("the mailbox's mod-sequence is %d (%v); Dovecot offers CONDSTORE", modseq, err)
	}

	c := f.srv.Dial(t)
	defer c.Close()
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	for uid, flag := range map[imap.UID]imap.Flag{uids[0]: imap.FlagSeen, uids[1]: imap.FlagFlagged} {
		if err := c.Store(imap.UIDSetNum(uid), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Flags: []imap.Flag{flag}, Silent: true}, nil).Close(); err != nil {
			t.Fatal(err)
		}
	}
	f.poll(t)
	got := flags()
	if !slices.Equal(got["to read"], []string{`\Seen`}) || !slices.Equal(got["to flag"], []string{`\Flagged`}) || len(got["left alone"]) != 0 {
		t.Fatalf("flags after the owner read one and flagged another: %v", got)
	}
	if fl := f.srv.Flags(t, uids[2]); slices.Contains(fl, imap.FlagSeen) {
		t.Fatalf("buddi's polls marked the untouched message read: %v", fl)
	}
}
