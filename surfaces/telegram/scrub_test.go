package telegram_test

import (
	"context"
	"strings"
	"testing"

	"buddi/core/redact"
	"buddi/internal/pgtest"
)

// A key the owner pastes into the chat is scrubbed before the update is stored, and so
// before the message is: neither core.surface_updates nor the transcript holds it.
func TestPastedSecretIsNotStored(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	f := newFixture(t)
	scrub := redact.New(map[string]string{"API_KEY": secret})
	f.store.Scrub, f.convs.Scrub = scrub, scrub
	f.start()
	f.pair()
	f.handled(1)
	f.push(text(owner, ownerChat, "private", "here is the key: "+secret+" and a NUL\x00"))
	f.handled(2)
	pgtest.Eventually(t, "the message", func() bool {
		var n int
		_ = f.pool.QueryRow(context.Background(), `SELECT count(*) FROM core.messages`).Scan(&n)
		return n == 1
	})
	var updates, messages string
	if err := f.pool.QueryRow(context.Background(), `SELECT string_agg(payload::text, ' ') FROM core.surface_updates`).Scan(&updates); err != nil {
		t.Fatal(err)
	}
	if err := f.pool.QueryRow(context.Background(), `SELECT string_agg(body::text, ' ') FROM core.messages`).Scan(&messages); err != nil {
		t.Fatal(err)
	}
	for what, s := range map[string]string{"update": updates, "message": messages} {
		if strings.Contains(s, secret) || !strings.Contains(s, "‹secret:API_KEY›") {
			t.Errorf("the stored %s: %s", what, s)
		}
	}
}
