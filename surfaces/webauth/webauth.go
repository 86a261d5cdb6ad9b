// Package webauth holds the dashboard's sign-in state (seed 004, "Owner and surface
// authentication"): single-use tickets with a five-minute life, exchanged for sessions, for
// the dashboard off loopback and for each developer preview. Only hashes of tokens are
// stored. The command line issues tickets straight into the database; the server redeems them.
package webauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/eventlog"
)

// Purpose is what a ticket or session opens.
type Purpose string

// The purposes.
const (
	PurposeSession Purpose = "session" // the dashboard
	PurposePreview Purpose = "preview" // one developer preview (subject: plugin/name)
)

// Lifetimes.
const (
	TicketTTL         = 5 * time.Minute
	SessionTTL        = 30 * 24 * time.Hour
	PreviewSessionTTL = 24 * time.Hour
)

// ErrInvalid means the ticket or session is unknown, used, expired or revoked.
var ErrInvalid = errors.New("webauth: not a valid ticket or session")

// Querier is a pool, a connection or a transaction.
type Querier interface {
	eventlog.Querier
}

func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Issue creates a single-use ticket for purpose and subject, valid for TicketTTL, and
// returns it (the only time it exists in clear).
func Issue(ctx context.Context, q Querier, purpose Purpose, subject string) (string, error) {
	token := newToken()
	var ok bool
	err := q.QueryRow(ctx, `INSERT INTO core.web_tickets (token_hash, purpose, subject, expires_at)
		VALUES ($1, $2, $3, now() + $4::interval) RETURNING true`, hash(token), purpose, subject, TicketTTL.String()).Scan(&ok)
	if err != nil {
		return "", fmt.Errorf("issue a sign-in ticket: %w", err)
	}
	return token, nil
}

// Redeem uses ticket once (for purpose and subject) and opens a session for the same; it
// returns the session's token and lifetime. A ticket used, expired or meant for something
// else is ErrInvalid.
func Redeem(ctx context.Context, q Querier, ticket string, purpose Purpose, subject string) (string, time.Duration, error) {
	if err := Use(ctx, q, ticket, purpose, subject); err != nil {
		return "", 0, err
	}
	return Open(ctx, q, purpose, subject)
}

// Use spends ticket (for purpose and subject) without opening a session: the caller opens the
// one it needs. A ticket used, expired or meant for something else is ErrInvalid.
func Use(ctx context.Context, q Querier, ticket string, purpose Purpose, subject string) error {
	var used bool
	err := q.QueryRow(ctx, `UPDATE core.web_tickets SET used_at = now()
		WHERE token_hash = $1 AND purpose = $2 AND subject = $3 AND used_at IS NULL AND expires_at > now()
		RETURNING true`, hash(ticket), purpose, subject).Scan(&used)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrInvalid
	}
	if err != nil {
		return fmt.Errorf("redeem a ticket: %w", err)
	}
	return nil
}

// Open opens a session for purpose and subject and returns its token (the only time it exists
// in clear) and lifetime. The caller has established who it is for: a redeemed ticket, or the
// owner's tailnet identity.
func Open(ctx context.Context, q Querier, purpose Purpose, subject string) (string, time.Duration, error) {
	ttl := SessionTTL
	if purpose == PurposePreview {
		ttl = PreviewSessionTTL
	}
	token := newToken()
	var ok bool
	if err := q.QueryRow(ctx, `INSERT INTO core.web_sessions (token_hash, purpose, subject, expires_at)
		VALUES ($1, $2, $3, now() + $4::interval) RETURNING true`, hash(token), purpose, subject, ttl.String()).Scan(&ok); err != nil {
		return "", 0, fmt.Errorf("open a session: %w", err)
	}
	return token, ttl, nil
}

// Valid reports whether token is a live session for purpose and subject.
func Valid(ctx context.Context, q Querier, token string, purpose Purpose, subject string) (bool, error) {
	if token == "" {
		return false, nil
	}
	var ok bool
	err := q.QueryRow(ctx, `SELECT true FROM core.web_sessions WHERE token_hash = $1 AND purpose = $2 AND subject = $3
		AND revoked_at IS NULL AND expires_at > now()`, hash(token), purpose, subject).Scan(&ok)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check a session: %w", err)
	}
	return true, nil
}
