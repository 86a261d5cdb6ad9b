package telegram

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/redact"
	"buddi/core/seal"
)

// Surface is this surface's name in core's tables.
const Surface = "telegram"

// PairingTTL is how long a pairing code works.
const PairingTTL = 10 * time.Minute

// Store keeps the surface's state in core's tables. Whatever makes someone the owner here
// (a paired identity, a pairing code, a stored update) is sealed with Key, and a row whose
// seal does not check is treated as absent: whoever can write the database cannot pair a
// stranger or speak as the owner.
type Store struct {
	Pool *pgxpool.Pool // the application's database
	// Scrub, when set, takes stored secrets out of each update before it is stored (the
	// owner may paste a key into the chat); nil stores them as they came.
	Scrub redact.Scrubber
	// Key is the installation's seal key. The zero Key pairs no one and trusts no row.
	Key seal.Key
	// Log receives a line for each refused row; nil logs nothing (the event is recorded).
	Log *slog.Logger

	refused seal.Refusals // the refused rows reported already
}

// NewPairingCode issues a one-time code, valid PairingTTL. Only its keyed hash is stored.
func (s *Store) NewPairingCode(ctx context.Context) (string, time.Time, error) {
	if s.Key.IsZero() {
		return "", time.Time{}, ErrNoKey
	}
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 8)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", time.Time{}, err
		}
		b[i] = alphabet[n.Int64()]
	}
	code := string(b)
	hash := s.codeHash(code)
	expires := time.Now().Add(PairingTTL).UTC().Truncate(time.Microsecond)
	if _, err := s.Pool.Exec(ctx, `INSERT INTO core.pairing_codes (code_hash, surface, expires_at, seal) VALUES ($1, $2, $3, $4)`,
		hash, Surface, expires, s.Key.Seal(purposeCodeRow, hash, Surface, seal.Stamp(expires))); err != nil {
		return "", time.Time{}, fmt.Errorf("issue a pairing code: %w", err)
	}
	return code, expires, nil
}

// ErrBadCode means the pairing code is unknown, used or expired.
var ErrBadCode = errors.New("telegram: the pairing code is wrong, used or expired")

// Pair uses code (as `buddi telegram pair` printed it) once and pairs the user with their
// private chat.
func (s *Store) Pair(ctx context.Context, code string, user User, chat int64) error {
	if s.Key.IsZero() {
		return ErrNoKey
	}
	return s.pairHash(ctx, s.codeHash(strings.TrimSpace(code)), user, chat)
}

// pairHash uses the code whose keyed hash is hash once, and pairs the user with their private
// chat: a code row whose seal does not check pairs no one. A live identity of the same user
// and chat that buddi did not seal is replaced by the new, sealed one.
func (s *Store) pairHash(ctx context.Context, hash string, user User, chat int64) error {
	if s.Key.IsZero() {
		return ErrNoKey
	}
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var expires time.Time
		var sum string
		err := tx.QueryRow(ctx, `SELECT expires_at, seal FROM core.pairing_codes
			WHERE code_hash = $1 AND surface = $2 AND used_at IS NULL AND expires_at > now() FOR UPDATE`, hash, Surface).Scan(&expires, &sum)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrBadCode
		}
		if err != nil {
			return err
		}
		if why := s.Key.Why(sum, purposeCodeRow, hash, Surface, seal.Stamp(expires)); why != "" {
			s.refuse(ctx, "pairing code", hash, why, fixCode)
			return ErrBadCode
		}
		if _, err := tx.Exec(ctx, `UPDATE core.pairing_codes SET used_at = now() WHERE code_hash = $1 AND surface = $2`, hash, Surface); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE core.surface_identities SET unpaired_at = now()
			WHERE surface = $1 AND user_id = $2 AND chat_id = $3 AND unpaired_at IS NULL`, Surface, user.ID, chat); err != nil {
			return err
		}
		d := Device{UserID: user.ID, ChatID: chat}
		if err := tx.QueryRow(ctx, `INSERT INTO core.surface_identities (surface, user_id, chat_id, name) VALUES ($1, $2, $3, $4)
			RETURNING id, paired_at`, Surface, user.ID, chat, user.FirstName).Scan(&d.ID, &d.PairedAt); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE core.surface_identities SET seal = $2 WHERE id = $1`, d.ID, s.identitySeal(d)); err != nil {
			return err
		}
		_, err = eventlog.Append(ctx, tx, events.TelegramPaired, "", events.TelegramPairedPayload{UserID: user.ID, ChatID: chat})
		return err
	})
}

// Paired reports whether user is paired with this private chat: a live identity buddi
// sealed. One whose seal does not check pairs no one, and is recorded (telegram.forged).
func (s *Store) Paired(ctx context.Context, user, chat int64) (bool, error) {
	rows, err := s.Pool.Query(ctx, `SELECT id, user_id, chat_id, name, paired_at, seal FROM core.surface_identities
		WHERE surface = $1 AND user_id = $2 AND chat_id = $3 AND unpaired_at IS NULL ORDER BY id`, Surface, user, chat)
	if err != nil {
		return false, err
	}
	ds, err := s.scanDevices(ctx, rows)
	if err != nil {
		return false, err
	}
	for _, d := range ds {
		if d.Sealed {
			return true, nil
		}
	}
	return false, nil
}

// Device is a paired identity.
type Device struct {
	ID       int64     `json:"id"`        // the pairing's number
	UserID   int64     `json:"user_id"`   // the Telegram user
	ChatID   int64     `json:"chat_id"`   // their private chat with the bot
	Name     string    `json:"name"`      // their first name, as Telegram gave it (never trusted)
	PairedAt time.Time `json:"paired_at"` // when
	// Sealed is true when buddi paired it (its seal checks); an identity that is not sealed
	// (an earlier buddi's, or one written into the database) pairs no one.
	Sealed bool `json:"sealed"`
}

// Devices lists the live paired identities, sealed or not (Sealed says which count).
func (s *Store) Devices(ctx context.Context) ([]Device, error) {
	rows, err := s.Pool.Query(ctx, `SELECT id, user_id, chat_id, name, paired_at, seal FROM core.surface_identities
		WHERE surface = $1 AND unpaired_at IS NULL ORDER BY id`, Surface)
	if err != nil {
		return nil, err
	}
	return s.scanDevices(ctx, rows)
}

// scanDevices reads identities and checks each one's seal, recording those that do not check.
func (s *Store) scanDevices(ctx context.Context, rows pgx.Rows) ([]Device, error) {
	type row struct {
		d   Device
		sum string
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		err := r.Scan(&x.d.ID, &x.d.UserID, &x.d.ChatID, &x.d.Name, &x.d.PairedAt, &x.sum)
		return x, err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Device, 0, len(found))
	for _, x := range found {
		why := s.identityWhy(x.d, x.sum)
		x.d.Sealed = why == ""
		if !x.d.Sealed {
			s.refuse(ctx, "paired identity", x.d.ID, why, fixIdentity)
		}
		out = append(out, x.d)
	}
	return out, nil
}

// Unpair removes a paired identity.
func (s *Store) Unpair(ctx context.Context, id int64) error {
	tag, err := s.Pool.Exec(ctx, `UPDATE core.surface_identities SET unpaired_at = now() WHERE id = $1 AND surface = $2 AND unpaired_at IS NULL`, id, Surface)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("no paired device %d", id)
	}
	return nil
}

// ActiveAgent is the chat's active agent ("" for the default).
func (s *Store) ActiveAgent(ctx context.Context, chat int64) (string, error) {
	var a string
	err := s.Pool.QueryRow(ctx, `SELECT agent FROM core.surface_active_agent WHERE surface = $1 AND chat_id = $2`, Surface, chat).Scan(&a)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return a, err
}

// SetActiveAgent switches the chat's active agent.
func (s *Store) SetActiveAgent(ctx context.Context, chat int64, agent string) error {
	_, err := s.Pool.Exec(ctx, `INSERT INTO core.surface_active_agent (surface, chat_id, agent) VALUES ($1, $2, $3)
		ON CONFLICT (surface, chat_id) DO UPDATE SET agent = $3`, Surface, chat, agent)
	return err
}

// persist stores updates and advances the offset past them, in one transaction: nothing is
// acknowledged to Telegram (the next getUpdates' offset) before it is stored.
func (s *Store) persist(ctx context.Context, us []Update) error {
	if len(us) == 0 {
		_, err := s.Pool.Exec(ctx, `INSERT INTO core.surface_cursors (surface, next_offset) VALUES ($1, 0)
			ON CONFLICT (surface) DO UPDATE SET polled_at = now()`, Surface)
		return err
	}
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		next := int64(0)
		for _, u := range us {
			b, _ := json.Marshal(s.hideCode(u))
			if s.Scrub != nil {
				b = s.Scrub.JSON(b)
			}
			b = redact.StorableJSON(b) // a NUL in a message would fail the whole batch
			// The seal covers the payload as the database gives it back.
			var stored string
			err := tx.QueryRow(ctx, `INSERT INTO core.surface_updates (surface, update_id, payload) VALUES ($1, $2, $3)
				ON CONFLICT (surface, update_id) DO NOTHING RETURNING payload::text`, Surface, u.UpdateID, b).Scan(&stored)
			switch {
			case errors.Is(err, pgx.ErrNoRows): // stored before
			case err != nil:
				return err
			case !s.Key.IsZero():
				if _, err := tx.Exec(ctx, `UPDATE core.surface_updates SET seal = $3 WHERE surface = $1 AND update_id = $2`,
					Surface, u.UpdateID, s.updateSeal(u.UpdateID, stored)); err != nil {
					return err
				}
			}
			if u.UpdateID+1 > next {
				next = u.UpdateID + 1
			}
		}
		// The offset follows the batch just stored (Telegram may restart its ids: after a
		// quiet week they begin anew, and a new bot has its own).
		if _, err := tx.Exec(ctx, `INSERT INTO core.surface_cursors (surface, next_offset) VALUES ($1, $2)
			ON CONFLICT (surface) DO UPDATE SET next_offset = $2, polled_at = now()`, Surface, next); err != nil {
			return err
		}
		// Handled updates are forgotten after a week, so a restarted id sequence is not
		// mistaken for updates already stored.
		_, err := tx.Exec(ctx, `DELETE FROM core.surface_updates WHERE surface = $1 AND state <> 'pending' AND received_at < now() - interval '7 days'`, Surface)
		return err
	})
}

// offset is where the next poll starts.
func (s *Store) offset(ctx context.Context) (int64, error) {
	var o int64
	err := s.Pool.QueryRow(ctx, `SELECT next_offset FROM core.surface_cursors WHERE surface = $1`, Surface).Scan(&o)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return o, err
}

// LastPoll is when the last poll succeeded (zero: never).
func (s *Store) LastPoll(ctx context.Context) (time.Time, error) {
	var t time.Time
	err := s.Pool.QueryRow(ctx, `SELECT polled_at FROM core.surface_cursors WHERE surface = $1`, Surface).Scan(&t)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil
	}
	return t, err
}

// pending are the stored updates not yet handled, in order. An update buddi did not store
// (its seal does not check: written into the table, or stored by an earlier buddi) is set
// aside as ignored and recorded, never handled.
func (s *Store) pending(ctx context.Context) ([]Update, error) {
	rows, err := s.Pool.Query(ctx, `SELECT update_id, payload::text, seal FROM core.surface_updates
		WHERE surface = $1 AND state = 'pending' ORDER BY update_id LIMIT 100`, Surface)
	if err != nil {
		return nil, err
	}
	type row struct {
		id      int64
		payload string
		sum     string
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		err := r.Scan(&x.id, &x.payload, &x.sum)
		return x, err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Update, 0, len(found))
	for _, x := range found {
		if why := s.Key.Why(x.sum, purposeUpdate, Surface, strconv.FormatInt(x.id, 10), x.payload); why != "" {
			s.refuse(ctx, "update", x.id, why, fixUpdate)
			if err := markHandled(ctx, s.Pool, x.id, "ignored", "refused: "+why); err != nil {
				return nil, err
			}
			continue
		}
		var u Update
		if err := json.Unmarshal([]byte(x.payload), &u); err == nil {
			out = append(out, u)
		}
	}
	return out, nil
}

// updateSeal seals a stored update: its id and its payload as the database keeps it.
func (s *Store) updateSeal(id int64, payload string) string {
	return s.Key.Seal(purposeUpdate, Surface, strconv.FormatInt(id, 10), payload)
}

// markHandled records how an update ended, through q (the transaction of its effect, so an
// update is never handled twice).
func markHandled(ctx context.Context, q interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, id int64, state, note string) error {
	_, err := q.Exec(ctx, `UPDATE core.surface_updates SET state = $3, note = $4, handled_at = now() WHERE surface = $1 AND update_id = $2`, Surface, id, state, note)
	return err
}
