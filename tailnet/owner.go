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

// Owner returns the owner's tailnet login, or "" when none is set yet.
func Owner(ctx context.Context, q Querier) (string, error) {
	var v struct {
		Login string `json:"login"`
	}
	var raw []byte
	err := q.QueryRow(ctx, `SELECT value FROM core.system_flags WHERE key = $1`, ownerKey).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the owner's tailnet login: %w", err)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("read the owner's tailnet login: %w", err)
	}
	return v.Login, nil
}

// ValidLogin checks a login given on the command line: a tailnet login is an address-like
// name (user@example.com, or a GitHub login like name@github).
func ValidLogin(login string) error {
	if login == "" || strings.ContainsAny(login, " \t\r\n") || !strings.Contains(login, "@") || len(login) > 256 {
		return fmt.Errorf("%q is not a tailnet login: give the login the owner signs in to Tailscale with, like you@example.com", login)
	}
	return nil
}

// SetOwner sets the owner's tailnet login (buddi tailnet owner LOGIN), replacing any, and
// records tailnet.owner_set.
func SetOwner(ctx context.Context, q Querier, login string) error {
	if err := ValidLogin(login); err != nil {
		return err
	}
	raw, _ := json.Marshal(map[string]string{"login": login, "how": "command"})
	if _, err := q.Exec(ctx, `INSERT INTO core.system_flags (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`, ownerKey, raw); err != nil {
		return fmt.Errorf("set the owner's tailnet login: %w", err)
	}
	if _, err := eventlog.Append(ctx, q, "tailnet.owner_set", "", map[string]any{"login": login, "how": "command"}); err != nil {
		return fmt.Errorf("set the owner's tailnet login: %w", err)
	}
	return nil
}

// PinOwner makes login the owner's when no owner is set yet (the first login to redeem a
// sign-in ticket over the tailnet), and returns the owner's login as it stands after: login
// itself, or the one set before.
func PinOwner(ctx context.Context, q Querier, login string) (string, error) {
	raw, _ := json.Marshal(map[string]string{"login": login, "how": "ticket"})
	tag, err := q.Exec(ctx, `INSERT INTO core.system_flags (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, ownerKey, raw)
	if err != nil {
		return "", fmt.Errorf("pin the owner's tailnet login: %w", err)
	}
	if tag.RowsAffected() == 1 {
		if _, err := eventlog.Append(ctx, q, "tailnet.owner_set", "", map[string]any{"login": login, "how": "ticket"}); err != nil {
			return "", fmt.Errorf("pin the owner's tailnet login: %w", err)
		}
		return login, nil
	}
	return Owner(ctx, q)
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
	kind := "tailnet.disabled"
	if on {
		kind = "tailnet.enabled"
	}
	if _, err := eventlog.Append(ctx, q, kind, "", map[string]any{}); err != nil {
		return fmt.Errorf("save the tailnet setting: %w", err)
	}
	return nil
}
