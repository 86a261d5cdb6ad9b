package email

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"buddi/plugins"
)

// An answer to the body that is neither 250 nor a refusal (4xx, 5xx) leaves the message's
// fate unknown: never "failed", which would let the same message be proposed and sent again.
func TestSendOddAnswerToTheBodyIsUnknown(t *testing.T) {
	for _, code := range []int{251, 354} {
		p := newPeer(t, peerOptions{})
		p.onData = func(*smtp.Conn, string) error {
			return &smtp.SMTPError{Code: code, Message: "odd"}
		}
		_, err := (&Sender{Timeout: 5 * time.Second}).Send(context.Background(), p.account(PlainLoopbackOnly), nil, outgoing(t))
		if err == nil || !errors.Is(err, plugins.ErrOutcomeUnknown) {
			t.Fatalf("a %d answer to the body: err = %v, want an unknown outcome", code, err)
		}
	}
}

// A stranger's header line has no character that reorders text or hides, even one encoded in
// a MIME word, and no line break.
func TestStrangerLineDecodesBeforeStripping(t *testing.T) {
	for _, in := range []string{"Hi =?utf-8?q?=E2=80=AEevil?=", "Hi \u202eevil", "Hi =?utf-8?q?=0D=0AX-Injected:_1?=", "Hi =?utf-8?q?=F3=A0=81=B3=E2=80=8B?=there"} {
		got := HeaderLine(in)
		if strings.ContainsAny(got, "\u202e\r\n\u200b\U000E0073") {
			t.Errorf("HeaderLine(%q) = %q", in, got)
		}
	}
}
