package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/seal"
)

// The seals' purposes: one per kind of row, so a seal never checks on a row of another kind.
const (
	purposeIdentity = "telegram.identity"     // a paired identity: id, surface, user, chat, when
	purposeCode     = "telegram.pairing-code" // a pairing code's keyed hash: surface, code
	purposeCodeRow  = "telegram.pairing"      // a pairing code's row: its hash, surface, expiry
	purposeUpdate   = "telegram.update"       // a stored update: surface, id, payload as stored
	purposeBot      = "telegram.bot"          // the bot's record: its username and id
)

// ErrNoKey means the store has no seal key: it pairs nobody and stores nothing it would
// have to trust later.
var ErrNoKey = errors.New("telegram: no seal key: buddi pairs no one without it")

// codeHash is what a pairing code is kept as: keyed, so whoever reads or writes the table
// can neither learn a code nor make one.
func (s *Store) codeHash(code string) string { return s.Key.Seal(purposeCode, Surface, code) }

// identitySeal seals a paired identity.
func (s *Store) identitySeal(d Device) string {
	return s.Key.Seal(purposeIdentity, strconv.FormatInt(d.ID, 10), Surface, strconv.FormatInt(d.UserID, 10),
		strconv.FormatInt(d.ChatID, 10), seal.Stamp(d.PairedAt))
}

// identityWhy says why a stored identity is not one buddi paired ("" when it is).
func (s *Store) identityWhy(d Device, sum string) string {
	return s.Key.Why(sum, purposeIdentity, strconv.FormatInt(d.ID, 10), Surface, strconv.FormatInt(d.UserID, 10),
		strconv.FormatInt(d.ChatID, 10), seal.Stamp(d.PairedAt))
}

// startPrefix begins a pairing message: "/start CODE", as Telegram's t.me link sends it.
const startPrefix = "/start "

// sealedStart is how a pairing message is stored: the code's keyed hash in place of the
// code, so the code never rests in the database in clear.
const sealedStart = startPrefix + "#"

// hideCode replaces the code of a pairing message by its keyed hash, before the update is
// stored; other updates are left as they are. m is copied, never changed.
func (s *Store) hideCode(u Update) Update {
	if u.Message == nil {
		return u
	}
	code, ok := strings.CutPrefix(strings.TrimSpace(u.Message.Text), startPrefix)
	if !ok {
		return u
	}
	m := *u.Message
	m.Text = strings.TrimSpace(startPrefix)
	if code = strings.TrimSpace(code); code != "" && !s.Key.IsZero() {
		m.Text = sealedStart + s.codeHash(code)
	}
	u.Message = &m
	return u
}

// refuse records a row that is not buddi's own (its seal does not check) once per process:
// a telegram.forged event and a log line, each with what the owner does about it.
func (s *Store) refuse(ctx context.Context, row string, id any, why, fix string) {
	if !s.refused.First(fmt.Sprint(row, "\x00", id, "\x00", why)) {
		return
	}
	if s.Log != nil {
		s.Log.Warn("a Telegram record is refused: "+why+"; "+fix, "service", "telegram", "row", row, "id", id)
	}
	if _, err := eventlog.Append(ctx, s.Pool, events.TelegramForged, "", events.TelegramForgedPayload{Row: row, ID: id, Reason: why, Fix: fix}); err != nil && s.Log != nil {
		s.Log.Warn("record a refused Telegram record", "service", "telegram", "err", err)
	}
}

// The sentences that say what the owner does about a refused row.
const (
	fixIdentity = "pair the phone again with `buddi telegram pair`"
	fixUpdate   = "the message was not handled: send it again"
	fixCode     = "make a new code with `buddi telegram pair`"
	fixBot      = "run `buddi telegram setup` again"
)

// BotRecord is the bot `buddi telegram setup` checked: its username, for the pairing link.
type BotRecord struct {
	Username string `json:"username"` // the bot's @name, without the @
	ID       int64  `json:"id"`       // the bot's user id
	// Refused says why the record is not buddi's own ("" when its seal checks): a pairing
	// link must never point at a bot someone else named.
	Refused string `json:"-"`
}

// SetBot records the bot `buddi telegram setup` checked with getMe, sealed.
func (s *Store) SetBot(ctx context.Context, username string, id int64) error {
	if s.Key.IsZero() {
		return ErrNoKey
	}
	raw, _ := json.Marshal(BotRecord{Username: username, ID: id})
	_, err := s.Pool.Exec(ctx, `INSERT INTO core.system_flags (key, value, seal) VALUES ('telegram_bot', $1, $2)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, seal = EXCLUDED.seal, updated_at = now()`,
		raw, s.Key.Seal(purposeBot, username, strconv.FormatInt(id, 10)))
	if err != nil {
		return fmt.Errorf("record the Telegram bot: %w", err)
	}
	return nil
}

// Bot reads the bot's record; found is false when `buddi telegram setup` never ran. A record
// whose seal does not check comes back with Refused set (and is recorded).
func (s *Store) Bot(ctx context.Context) (b BotRecord, found bool, err error) {
	var raw []byte
	var sum string
	err = s.Pool.QueryRow(ctx, `SELECT value, seal FROM core.system_flags WHERE key = 'telegram_bot'`).Scan(&raw, &sum)
	if errors.Is(err, pgx.ErrNoRows) {
		return b, false, nil
	}
	if err != nil {
		return b, false, fmt.Errorf("read the Telegram bot's record: %w", err)
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		b.Refused = "it cannot be read"
	} else {
		b.Refused = s.Key.Why(sum, purposeBot, b.Username, strconv.FormatInt(b.ID, 10))
	}
	if b.Refused != "" {
		s.refuse(ctx, "bot", b.Username, b.Refused, fixBot)
	}
	return b, true, nil
}
