package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"buddi/core/seal"
)

// TokenPrefix starts every API token, so that one found in a file or a log says what it is.
const TokenPrefix = "buddi_mcp_"

// Querier is a pool, a connection or a transaction.
type Querier interface {
	// Exec runs sql with args.
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	// QueryRow runs sql with args and returns its first row.
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	// Query runs sql with args and returns its rows.
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Token is what is kept of an API token: never its value.
type Token struct {
	Name      string     `json:"name"`                   // the owner's name for it
	ReadOnly  bool       `json:"read_only"`              // it may call the read tools only
	CreatedAt time.Time  `json:"created_at"`             // when it was created
	LastUsed  *time.Time `json:"last_used_at,omitempty"` // its last accepted request (to the minute); nil if never
	RevokedAt *time.Time `json:"revoked_at,omitempty"`   // when it was revoked; nil while it works
	// Hash is the token's keyed hash, set by Check: what names this token and no other, as a
	// name taken again after a revoke does not.
	Hash string `json:"-"`
}

// Tokens creates, lists, checks and revokes the API tokens of /mcp. Only a keyed hash of a
// token is stored (an HMAC under the installation's seal key, as webauth stores sessions),
// and each row carries a seal over its name, its read-only flag and that hash: whoever can
// write the database can neither add a token nor make a read-only one write.
type Tokens struct {
	// Q is the database: a pool, a connection or a transaction.
	Q Querier
	// Key is the installation's seal key. The zero key creates and accepts nothing.
	Key seal.Key
}

// Errors the command line tells apart.
var (
	// ErrNoKey means the Tokens have no seal key: nothing is created or accepted.
	ErrNoKey = errors.New("mcpserver: no seal key")
	// ErrExists refuses a name that a working token already has.
	ErrExists = errors.New("a working token already has this name: revoke it first, or choose another")
	// ErrNoToken is a revoke of a name no working token has.
	ErrNoToken = errors.New("no working token has this name: `buddi tokens list` shows them")
	// ErrBadName refuses a name that is not 1 to 64 letters, digits, dots, dashes or underscores.
	ErrBadName = errors.New("a token's name is 1 to 64 letters, digits, dots, dashes or underscores")
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func (t Tokens) hash(token string) string { return t.Key.Seal("mcp-token", token) }

func (t Tokens) rowSeal(name string, readOnly bool, hash string) string {
	return t.Key.Seal("mcp-token-row", name, strconv.FormatBool(readOnly), hash)
}

// Create makes a token called name and returns its value: the only time it exists in clear.
// A revoked token's name may be taken again.
func (t Tokens) Create(ctx context.Context, name string, readOnly bool) (string, error) {
	if t.Key.IsZero() {
		return "", ErrNoKey
	}
	if !nameRE.MatchString(name) {
		return "", ErrBadName
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make a token: %w", err)
	}
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	h := t.hash(token)
	if _, err := t.Q.Exec(ctx, `DELETE FROM core.mcp_tokens WHERE name = $1 AND revoked_at IS NOT NULL`, name); err != nil {
		return "", fmt.Errorf("create token %s: %w", name, err)
	}
	_, err := t.Q.Exec(ctx, `INSERT INTO core.mcp_tokens (name, token_hash, read_only, seal) VALUES ($1, $2, $3, $4)`,
		name, h, readOnly, t.rowSeal(name, readOnly, h))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return "", ErrExists
	}
	if err != nil {
		return "", fmt.Errorf("create token %s: %w", name, err)
	}
	return token, nil
}

// List returns every token, working and revoked, by name.
func (t Tokens) List(ctx context.Context) ([]Token, error) {
	rows, err := t.Q.Query(ctx, `SELECT name, read_only, created_at, last_used_at, revoked_at FROM core.mcp_tokens ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list the tokens: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Token, error) {
		var tk Token
		err := r.Scan(&tk.Name, &tk.ReadOnly, &tk.CreatedAt, &tk.LastUsed, &tk.RevokedAt)
		return tk, err
	})
	if err != nil {
		return nil, fmt.Errorf("list the tokens: %w", err)
	}
	return out, nil
}

// Revoke stops the working token called name: its next request is a 401.
func (t Tokens) Revoke(ctx context.Context, name string) error {
	tag, err := t.Q.Exec(ctx, `UPDATE core.mcp_tokens SET revoked_at = now() WHERE name = $1 AND revoked_at IS NULL`, name)
	if err != nil {
		return fmt.Errorf("revoke token %s: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNoToken
	}
	return nil
}

// Check returns the working token whose value is token, and notes its use. found is false for
// a token unknown, revoked, or whose row does not carry its seal.
func (t Tokens) Check(ctx context.Context, token string) (tk Token, found bool, err error) {
	if t.Key.IsZero() || !strings.HasPrefix(token, TokenPrefix) {
		return Token{}, false, nil
	}
	h := t.hash(token)
	var sum string
	err = t.Q.QueryRow(ctx, `SELECT name, read_only, seal, created_at, last_used_at FROM core.mcp_tokens
		WHERE token_hash = $1 AND revoked_at IS NULL`, h).Scan(&tk.Name, &tk.ReadOnly, &sum, &tk.CreatedAt, &tk.LastUsed)
	if errors.Is(err, pgx.ErrNoRows) {
		return Token{}, false, nil
	}
	if err != nil {
		return Token{}, false, fmt.Errorf("check a token: %w", err)
	}
	if !t.Key.Check(sum, "mcp-token-row", tk.Name, strconv.FormatBool(tk.ReadOnly), h) {
		return Token{}, false, nil // a row written without the key: no token at all
	}
	// Noted at most once a minute, so that a busy client does not write on every request.
	if _, err := t.Q.Exec(ctx, `UPDATE core.mcp_tokens SET last_used_at = now()
		WHERE name = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`, tk.Name); err != nil {
		return Token{}, false, fmt.Errorf("note a token's use: %w", err)
	}
	tk.Hash = h
	return tk, true, nil
}
