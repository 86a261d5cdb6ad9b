package tailnet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/seal"
)

// The keys in core.system_flags.
const (
	ownerKey   = "tailnet_owner"   // {"login": "...", "how": "command"|"ticket"}
	enabledKey = "tailnet_enabled" // {"enabled": true}
)

// Querier is a pool, a connection or a transaction.
type Querier interface {
	eventlog.Querier
	// Exec runs sql with args.
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// purposeOwner is the seal's purpose for the owner's login: the login and how it was set.
const purposeOwner = "tailnet.owner"

// ownerFix says what the owner does about a login buddi did not seal.
const ownerFix = "set it again with `buddi tailnet owner LOGIN`, or open a sign-in link from `buddi dashboard --tailnet`"

// Pinned is the owner's tailnet login as stored.
type Pinned struct {
	// Login is the owner's login: "" when none is set, or when the stored one is refused.
	Login string
	// Refused is a stored login whose seal does not check (an earlier buddi wrote it, or it
	// was written into the database): it is nobody's, and Why says why.
	Refused string
	// Why says why Refused is refused.
	Why string

	sum string // the stored seal, so a pin replaces only the row it read
}

// ReadOwner reads the owner's tailnet login and checks its seal under key: a login whose seal
// does not check is no owner (Login is "", Refused names it).
func ReadOwner(ctx context.Context, q Querier, key seal.Key) (Pinned, error) {
	var v struct {
		Login string `json:"login"`
		How   string `json:"how"`
	}
	var raw []byte
	var p Pinned
	err := q.QueryRow(ctx, `SELECT value, seal FROM core.system_flags WHERE key = $1`, ownerKey).Scan(&raw, &p.sum)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("read the owner's tailnet login: %w", err)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return p, fmt.Errorf("read the owner's tailnet login: %w", err)
	}
	if why := key.Why(p.sum, purposeOwner, v.Login, v.How); why != "" {
		p.Refused, p.Why = v.Login, why
		return p, nil
	}
	p.Login = v.Login
	return p, nil
}

// Owner returns the owner's tailnet login, or "" when none is set yet or the stored one is
// not sealed under key.
func Owner(ctx context.Context, q Querier, key seal.Key) (string, error) {
	p, err := ReadOwner(ctx, q, key)
	return p.Login, err
}

// ValidLogin checks a login given on the command line: a tailnet login is an address-like
// name (user@example.com, or a GitHub login like name@github).
func ValidLogin(login string) error {
	if login == "" || strings.ContainsAny(login, " \t\r\n") || !strings.Contains(login, "@") || len(login) > 256 {
		return fmt.Errorf("%q is not a tailnet login: give the login the owner signs in to Tailscale with, like you@example.com", login)
	}
	return nil
}

// ownerValue is the stored value of login set how, and its seal.
func ownerValue(key seal.Key, login, how string) ([]byte, string) {
	raw, _ := json.Marshal(map[string]string{"login": login, "how": how})
	return raw, key.Seal(purposeOwner, login, how)
}

// SetOwner sets the owner's tailnet login (buddi tailnet owner LOGIN), sealed with key,
// replacing any, and records tailnet.owner_set.
func SetOwner(ctx context.Context, q Querier, key seal.Key, login string) error {
	if err := ValidLogin(login); err != nil {
		return err
	}
	if key.IsZero() {
		return fmt.Errorf("set the owner's tailnet login: %w", seal.ErrNoKey)
	}
	raw, sum := ownerValue(key, login, "command")
	if _, err := q.Exec(ctx, `INSERT INTO core.system_flags (key, value, seal) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, seal = EXCLUDED.seal, updated_at = now()`, ownerKey, raw, sum); err != nil {
		return fmt.Errorf("set the owner's tailnet login: %w", err)
	}
	if _, err := eventlog.Append(ctx, q, events.TailnetOwnerSet, "", events.TailnetOwnerSetPayload{Login: login, How: "command"}); err != nil {
		return fmt.Errorf("set the owner's tailnet login: %w", err)
	}
	return nil
}

// PinOwner makes login the owner's when no owner is set yet (the first login to redeem a
// sign-in ticket over the tailnet), or when the stored one is not sealed under key, and
// returns the owner's login as it stands after: login itself, or the sealed one set before.
func PinOwner(ctx context.Context, q Querier, key seal.Key, login string) (string, error) {
	if key.IsZero() {
		return "", fmt.Errorf("pin the owner's tailnet login: %w", seal.ErrNoKey)
	}
	raw, sum := ownerValue(key, login, "ticket")
	tag, err := q.Exec(ctx, `INSERT INTO core.system_flags (key, value, seal) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING`, ownerKey, raw, sum)
	if err != nil {
		return "", fmt.Errorf("pin the owner's tailnet login: %w", err)
	}
	if tag.RowsAffected() == 0 {
		p, err := ReadOwner(ctx, q, key)
		if err != nil || p.Login != "" {
			return p.Login, err
		}
		// The stored login is nobody's: the ticket's replaces it, unless it changed meanwhile.
		if tag, err = q.Exec(ctx, `UPDATE core.system_flags SET value = $2, seal = $3, updated_at = now() WHERE key = $1 AND seal = $4`,
			ownerKey, raw, sum, p.sum); err != nil {
			return "", fmt.Errorf("pin the owner's tailnet login: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return Owner(ctx, q, key)
		}
	}
	if _, err := eventlog.Append(ctx, q, events.TailnetOwnerSet, "", events.TailnetOwnerSetPayload{Login: login, How: "ticket"}); err != nil {
		return "", fmt.Errorf("pin the owner's tailnet login: %w", err)
	}
	return login, nil
}

// Enabled reports whether the owner turned the tailnet on (buddi tailnet on). Off by default.
func Enabled(ctx context.Context, q Querier) (bool, error) {
	var on bool
	err := q.QueryRow(ctx, `SELECT coalesce((value->>'enabled')::boolean, false) FROM core.system_flags WHERE key = $1`, enabledKey).Scan(&on)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the tailnet setting: %w", err)
	}
	return on, nil
}

// SetEnabled turns the tailnet on or off for the next start of buddi serve, and records
// tailnet.enabled or tailnet.disabled.
func SetEnabled(ctx context.Context, q Querier, on bool) error {
	raw, _ := json.Marshal(map[string]bool{"enabled": on})
	if _, err := q.Exec(ctx, `INSERT INTO core.system_flags (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`, enabledKey, raw); err != nil {
		return fmt.Errorf("save the tailnet setting: %w", err)
	}
	kind := events.TailnetDisabled
	if on {
		kind = events.TailnetEnabled
	}
	if _, err := eventlog.Append(ctx, q, kind, "", events.None{}); err != nil {
		return fmt.Errorf("save the tailnet setting: %w", err)
	}
	return nil
}
