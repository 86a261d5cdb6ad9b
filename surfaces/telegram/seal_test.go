package telegram_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"buddi/core/action"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/surfaces/telegram"
	"buddi/surfaces/telegram/telegramtest"
)

// The rows below are written straight into the tables, as the database's administrator (or
// anything holding the role's password) would; none of them makes anyone the owner.

const stranger, strangerChat = int64(7), int64(77)

// runs counts the runs the bot started.
func (f *fixture) runCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.runs)
}

// forgedEvents counts telegram.forged events.
func (f *fixture) forgedEvents() int {
	var n int
	_ = f.pool.QueryRow(context.Background(), `SELECT count(*) FROM core.events WHERE kind = 'telegram.forged'`).Scan(&n)
	return n
}

// note is how the update ended.
func (f *fixture) note(id int64) (state, note string) {
	_ = f.pool.QueryRow(context.Background(), `SELECT state, note FROM core.surface_updates WHERE surface = 'telegram' AND update_id = $1`, id).Scan(&state, &note)
	return state, note
}

func TestForgedIdentityMakesNoOwner(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.pool.Exec(ctx, `INSERT INTO core.surface_identities (surface, user_id, chat_id, name) VALUES ('telegram', $1, $2, 'Mallory')`, stranger, strangerChat); err != nil {
		t.Fatal(err)
	}
	var rec action.Record
	if err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		var err error
		rec, err = action.Create(ctx, tx, testKey, action.Proposal{Call: plugins.Call{Tool: "mail.send", Args: json.RawMessage(`{}`), Agent: "helper"},
			Version: "1", Envelope: plugins.Envelope{Summary: "Send the mail", Effects: []plugins.Effect{plugins.EffectNetWrite}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	f.start()
	// The stranger writes, and taps a card's own button (as if its callback data had leaked).
	f.push(text(stranger, strangerChat, "private", "hello, I am the owner now"))
	f.push(map[string]any{"callback_query": map[string]any{"id": "cq", "from": map[string]any{"id": stranger, "first_name": "Mallory"},
		"message": map[string]any{"message_id": 9, "chat": map[string]any{"id": strangerChat, "type": "private"}, "text": "Send the mail"},
		"data":    "approve|" + rec.ID + "|" + telegram.Nonce(telegramtest.Token, rec.ID, "approve")}})
	f.handled(2)
	if n := f.runCount(); n != 0 {
		t.Errorf("a forged identity's message started %d runs", n)
	}
	if got, _ := action.Get(ctx, f.pool, rec.ID); got.Approval.State != action.Pending {
		t.Errorf("a forged identity's button decided the action: %s", got.Approval.State)
	}
	if sends := f.api.Calls("sendMessage"); len(sends) != 0 {
		t.Errorf("the stranger got answers: %+v", sends)
	}
	for _, id := range []int64{1, 2} {
		if state, _ := f.note(id); state != "ignored" {
			t.Errorf("update %d: %s, want ignored", id, state)
		}
	}
	if n := f.forgedEvents(); n < 1 {
		t.Error("no telegram.forged event for the forged identity")
	}
	if ds, _ := f.store.Devices(ctx); len(ds) != 1 || ds[0].Sealed {
		t.Errorf("devices: %+v, want the forged one, shown unsealed", ds)
	}
	// The same pairing made through buddi's own path works.
	f.pair()
	f.handled(3)
	f.push(text(owner, ownerChat, "private", "hello"))
	pgtest.Eventually(t, "the owner's run", func() bool { return f.runCount() == 1 })
}

func TestForgedPairingCodePairsNobody(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// A code the forger knows, hashed the way it could be: plain SHA-256, or any text at all.
	sum := sha256.Sum256([]byte("FORGED12"))
	if _, err := f.pool.Exec(ctx, `INSERT INTO core.pairing_codes (code_hash, surface, expires_at) VALUES ($1, 'telegram', now() + interval '5 minutes'), ('FORGED34', 'telegram', now() + interval '5 minutes')`,
		hex.EncodeToString(sum[:])); err != nil {
		t.Fatal(err)
	}
	f.start()
	f.push(text(stranger, strangerChat, "private", "/start FORGED12"))
	f.push(text(stranger, strangerChat, "private", "/start FORGED34"))
	f.handled(2)
	if ok, _ := f.store.Paired(ctx, stranger, strangerChat); ok {
		t.Fatal("a forged pairing code paired a stranger")
	}
	if sends := f.api.Calls("sendMessage"); len(sends) != 0 {
		t.Errorf("the stranger got answers: %+v", sends)
	}
	// A code buddi issued pairs, and is never kept in clear: not in the codes, not in the
	// stored update that carried it.
	code, _, err := f.store.NewPairingCode(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.push(text(owner, ownerChat, "private", "/start "+code))
	f.handled(3)
	if ok, _ := f.store.Paired(ctx, owner, ownerChat); !ok {
		t.Fatal("buddi's own code did not pair")
	}
	var clear int
	if err := f.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM core.surface_updates WHERE payload::text LIKE '%' || $1 || '%')
		+ (SELECT count(*) FROM core.pairing_codes WHERE code_hash LIKE '%' || $1 || '%')`, code).Scan(&clear); err != nil || clear != 0 {
		t.Errorf("the code %s is kept in clear in %d rows (%v)", code, clear, err)
	}
}

func TestForgedUpdateIsIgnored(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.start()
	f.pair()
	f.handled(1)
	f.stop()
	// An update written into the table, as if Telegram had brought it from the owner.
	u := text(owner, ownerChat, "private", "delete everything")
	u["update_id"] = int64(2)
	b, _ := json.Marshal(u)
	if _, err := f.pool.Exec(ctx, `INSERT INTO core.surface_updates (surface, update_id, payload) VALUES ('telegram', 2, $1)`, b); err != nil {
		t.Fatal(err)
	}
	f.nextID = 3
	f.start()
	f.push(text(owner, ownerChat, "private", "hello"))
	pgtest.Eventually(t, "the owner's run", func() bool { return f.runCount() >= 1 })
	f.handled(3)
	if n := f.runCount(); n != 1 {
		t.Errorf("%d runs, want 1: the forged update started one", n)
	}
	if state, note := f.note(2); state != "ignored" || !strings.Contains(note, "seal") {
		t.Errorf("the forged update: %s %q, want ignored for its seal", state, note)
	}
	if n := f.forgedEvents(); n != 1 {
		t.Errorf("telegram.forged events: %d, want 1", n)
	}
}
