package mailtest

import (
	"os"
	"slices"
	"testing"

	"github.com/emersion/go-imap/v2"
)

// TestDeliverAndReset starts Dovecot, delivers two messages unread, and shows a reset gives
// the INBOX a new UIDVALIDITY with its UIDs starting over.
func TestDeliverAndReset(t *testing.T) {
	s := Start(t)
	dir := s.Dir
	v1, next := s.Status(t)
	if next != 1 {
		t.Fatalf("a new INBOX's UIDNEXT = %d, want 1", next)
	}
	u1 := s.Deliver(t, Message{From: "a@example.org", To: "alice@example.org", Subject: "one", MessageID: "<1@example.org>", Body: "hello"})
	u2 := s.Deliver(t, Message{From: "a@example.org", To: "alice@example.org", Subject: "two", MessageID: "<2@example.org>", Body: "hello"})
	if u1 != 1 || u2 != 2 {
		t.Fatalf("UIDs = %d, %d, want 1, 2", u1, u2)
	}
	if f := s.Flags(t, u1); slices.Contains(f, imap.FlagSeen) {
		t.Fatalf("a delivered message is already \\Seen: %v", f)
	}
	s.ResetINBOX(t)
	v2, next := s.Status(t)
	if v2 == v1 || next != 1 {
		t.Fatalf("after a reset UIDVALIDITY %d (was %d), UIDNEXT %d; want a new UIDVALIDITY and 1", v2, v1, next)
	}
	s.stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the directory %s is left after stop: %v", dir, err)
	}
}
