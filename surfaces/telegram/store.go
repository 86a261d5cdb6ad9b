package telegram

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/eventlog"
	"buddi/core/redact"
)

// Surface is this surface's name in core's tables.
const Surface = "telegram"

// PairingTTL is how long a pairing code works.
const PairingTTL = 10 * time.Minute

// Store keeps the surface's state in core's tables.
type Store struct {
	Pool *pgxpool.Pool // the application's database
	// Scrub, when set, takes stored secrets out of each update before it is stored (the
	// owner may paste a key into the chat); nil stores them as they came.
	Scrub redact.Scrubber
}

func hashCode(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// NewPairingCode issues a one-time code, valid PairingTTL.
func (s *Store) NewPairingCode(ctx context.Context) (string, time.Time, error) {
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
	var expires time.Time
	err := s.Pool.QueryRow(ctx, `INSERT INTO core.pairing_codes (code_hash, surface, expires_at) VALUES ($1, $2, now() + $3::interval) RETURNING expires_at`,
		hashCode(code), Surface, PairingTTL.String()).Scan(&expires)
	return code, expires, err
}

// ErrBadCode means the pairing code is unknown, used or expired.
var ErrBadCode = errors.New("telegram: the pairing code is wrong, used or expired")

// Pair uses code once and pairs the user with their private chat.
func (s *Store) Pair(ctx context.Context, code string, user User, chat int64) error {
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE core.pairing_codes SET used_at = now() WHERE code_hash = $1 AND surface = $2 AND used_at IS NULL AND expires_at > now()`,
			hashCode(code), Surface)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrBadCode
		}
		if _, err := tx.Exec(ctx, `INSERT INTO core.surface_identities (surface, user_id, chat_id, name) VALUES ($1, $2, $3, $4)
			ON CONFLICT (surface, user_id, chat_id) WHERE unpaired_at IS NULL DO NOTHING`, Surface, user.ID, chat, user.FirstName); err != nil {
			return err
		}
		_, err = eventlog.Append(ctx, tx, "telegram.paired", "", map[string]any{"user_id": user.ID, "chat_id": chat})
		return err
	})
}

// Paired reports whether user is paired with this private chat.
func (s *Store) Paired(ctx context.Context, user, chat int64) (bool, error) {
	var ok bool
	err := s.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM core.surface_identities WHERE surface = $1 AND user_id = $2 AND chat_id = $3 AND unpaired_at IS NULL)`,
		Surface, user, chat).Scan(&ok)
	return ok, err
}

// Device is a paired identity.
type Device struct {
	ID       int64     `json:"id"`        // the pairing's number
	UserID   int64     `json:"user_id"`   // the Telegram user
	ChatID   int64     `json:"chat_id"`   // their private chat with the bot
	Name     string    `json:"name"`      // their first name, as Telegram gave it (never trusted)
	PairedAt time.Time `json:"paired_at"` // when
}

// Devices lists the paired identities.
func (s *Store) Devices(ctx context.Context) ([]Device, error) {
	rows, err := s.Pool.Query(ctx, `SELECT id, user_id, chat_id, name, paired_at FROM core.surface_identities WHERE surface = $1 AND unpaired_at IS NULL ORDER BY id`, Surface)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Device, error) {
		var d Device
		err := r.Scan(&d.ID, &d.UserID, &d.ChatID, &d.Name, &d.PairedAt)
		return d, err
	})
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
			b, _ := json.Marshal(u)
			if s.Scrub != nil {
				b = s.Scrub.JSON(b)
			}
			b = redact.StorableJSON(b) // a NUL in a message would fail the whole batch
			if _, err := tx.Exec(ctx, `INSERT INTO core.surface_updates (surface, update_id, payload) VALUES ($1, $2, $3)
				ON CONFLICT (surface, update_id) DO NOTHING`, Surface, u.UpdateID, b); err != nil {
				return err
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

// pending are the stored updates not yet handled, in order.
func (s *Store) pending(ctx context.Context) ([]Update, error) {
	rows, err := s.Pool.Query(ctx, `SELECT payload FROM core.surface_updates WHERE surface = $1 AND state = 'pending' ORDER BY update_id LIMIT 100`, Surface)
	if err != nil {
		return nil, err
	}
	raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, err
	}
	out := make([]Update, 0, len(raws))
	for _, r := range raws {
		var u Update
		if err := json.Unmarshal(r, &u); err == nil {
			out = append(out, u)
		}
	}
	return out, nil
}

// markHandled records how an update ended, through q (the transaction of its effect, so an
// update is never handled twice).
func markHandled(ctx context.Context, q interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, id int64, state, note string) error {
	_, err := q.Exec(ctx, `UPDATE core.surface_updates SET state = $3, note = $4, handled_at = now() WHERE surface = $1 AND update_id = $2`, Surface, id, state, note)
	return err
}
