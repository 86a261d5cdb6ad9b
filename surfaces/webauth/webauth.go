// Package webauth holds the dashboard's credentials: single-use sign-in tickets with a
// five-minute life, exchanged for sessions, for the dashboard (on loopback as off it) and
// for each developer preview; and the command line's token, a 0600 file in the data
// directory that the CLI sends as a bearer token.
//
// Only keyed hashes of tickets and sessions are stored: an HMAC under the installation's
// seal key (core/seal), bound to the purpose and subject. Whoever can write the database
// cannot add a ticket or session of their own, because they cannot compute the hash of a
// token they chose. The command line issues tickets straight into the database (it reads
// the same key); the server redeems them.
package webauth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/eventlog"
	"buddi/core/seal"
	"buddi/internal/socktable"
)

// Purpose is what a ticket or session opens.
type Purpose string

// The purposes.
const (
	PurposeSession Purpose = "session" // the dashboard
	PurposePreview Purpose = "preview" // one developer preview (subject: plugin/name)
)

// SubjectTailnet is the subject of a sign-in ticket meant for the tailnet (`buddi dashboard
// --tailnet`): the login that redeems it while no owner login is set becomes the owner's, so
// a ticket for the loopback dashboard (subject "") must not do that.
const SubjectTailnet = "tailnet"

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

// hash is what is stored of a token: its seal under key for purpose and subject. A zero key
// panics in seal; the callers refuse one first.
func hash(key seal.Key, token string, purpose Purpose, subject string) string {
	return key.Seal("web-token", string(purpose), subject, token)
}

// ErrNoKey means a caller passed no seal key: nothing is issued or accepted without one.
var ErrNoKey = errors.New("webauth: no seal key")

// Issue creates a single-use ticket for purpose and subject, valid for TicketTTL, and
// returns it (the only time it exists in clear).
func Issue(ctx context.Context, q Querier, key seal.Key, purpose Purpose, subject string) (string, error) {
	return IssueFor(ctx, q, key, purpose, subject, TicketTTL)
}

// IssueFor is Issue with another lifetime (buddi serve's start-up link lives longer than
// `buddi dashboard`'s, since nobody may be watching when it is printed).
func IssueFor(ctx context.Context, q Querier, key seal.Key, purpose Purpose, subject string, ttl time.Duration) (string, error) {
	if key.IsZero() {
		return "", ErrNoKey
	}
	token := newToken()
	var ok bool
	err := q.QueryRow(ctx, `INSERT INTO core.web_tickets (token_hash, purpose, subject, expires_at)
		VALUES ($1, $2, $3, now() + $4::interval) RETURNING true`, hash(key, token, purpose, subject), purpose, subject, ttl.String()).Scan(&ok)
	if err != nil {
		return "", fmt.Errorf("issue a sign-in ticket: %w", err)
	}
	return token, nil
}

// Redeem uses ticket once (for purpose and subject) and opens a session for the same; it
// returns the session's token and lifetime. A ticket used, expired or meant for something
// else is ErrInvalid.
func Redeem(ctx context.Context, q Querier, key seal.Key, ticket string, purpose Purpose, subject string) (string, time.Duration, error) {
	if err := Use(ctx, q, key, ticket, purpose, subject); err != nil {
		return "", 0, err
	}
	return Open(ctx, q, key, purpose, subject)
}

// Use spends ticket (for purpose and subject) without opening a session: the caller opens the
// one it needs. A ticket used, expired or meant for something else is ErrInvalid.
func Use(ctx context.Context, q Querier, key seal.Key, ticket string, purpose Purpose, subject string) error {
	if key.IsZero() {
		return ErrNoKey
	}
	if ticket == "" {
		return ErrInvalid
	}
	var used bool
	err := q.QueryRow(ctx, `UPDATE core.web_tickets SET used_at = now()
		WHERE token_hash = $1 AND purpose = $2 AND subject = $3 AND used_at IS NULL AND expires_at > now()
		RETURNING true`, hash(key, ticket, purpose, subject), purpose, subject).Scan(&used)
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
func Open(ctx context.Context, q Querier, key seal.Key, purpose Purpose, subject string) (string, time.Duration, error) {
	if key.IsZero() {
		return "", 0, ErrNoKey
	}
	ttl := SessionTTL
	if purpose == PurposePreview {
		ttl = PreviewSessionTTL
	}
	token := newToken()
	var ok bool
	if err := q.QueryRow(ctx, `INSERT INTO core.web_sessions (token_hash, purpose, subject, expires_at)
		VALUES ($1, $2, $3, now() + $4::interval) RETURNING true`, hash(key, token, purpose, subject), purpose, subject, ttl.String()).Scan(&ok); err != nil {
		return "", 0, fmt.Errorf("open a session: %w", err)
	}
	return token, ttl, nil
}

// Valid reports whether token is a live session for purpose and subject.
func Valid(ctx context.Context, q Querier, key seal.Key, token string, purpose Purpose, subject string) (bool, error) {
	if token == "" || key.IsZero() {
		return false, nil
	}
	var ok bool
	err := q.QueryRow(ctx, `SELECT true FROM core.web_sessions WHERE token_hash = $1 AND purpose = $2 AND subject = $3
		AND revoked_at IS NULL AND expires_at > now()`, hash(key, token, purpose, subject), purpose, subject).Scan(&ok)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check a session: %w", err)
	}
	return true, nil
}

// CLITokenFile is the command line's token file's name inside the data directory.
const CLITokenFile = "cli.token"

// ReadCLIToken returns the command line's token without creating it: an error when buddi has
// not made one yet (buddi serve does at start).
func ReadCLIToken(home string) (string, error) {
	raw, err := seal.ReadSecret(filepath.Join(home, CLITokenFile))
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}

// CLIToken returns the command line's token, from <home>/cli.token, creating it (0600) the
// first time. The CLI sends it as "Authorization: Bearer <token>"; buddi serve reads it once
// at start. It is never stored in the database.
func CLIToken(home string) (string, error) {
	raw, err := seal.ReadOrCreate(filepath.Join(home, CLITokenFile), 32)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}

// RenewCLIToken makes a new command-line token in <home>/cli.token and returns it: buddi serve
// renews it at every start, so a token that leaked stops working at the next start.
func RenewCLIToken(home string) (string, error) {
	raw, err := seal.Renew(filepath.Join(home, CLITokenFile), 32)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}

// MetricsTokenFile is the scrape token's file's name inside the data directory.
const MetricsTokenFile = "metrics.token"

// MetricsToken returns the token a Prometheus scrape sends ("Authorization: Bearer …"), from
// <home>/metrics.token, creating it (0600) the first time. It opens GET /metrics and nothing
// else, and it stays the same across starts, so a scrape's configuration keeps working; the
// owner's full credential, the command line's token, is renewed at every start instead.
func MetricsToken(home string) (string, error) {
	raw, err := seal.ReadOrCreate(filepath.Join(home, MetricsTokenFile), 32)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}

// SameToken compares a presented token with the expected one in constant time; an empty
// expected token matches nothing.
func SameToken(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// CheckListener says whether the command line may send its token to the dashboard at addr
// (host:port): nil unless the kernel says another local account holds that port. Another
// account that takes the port while buddi is down (or restarting) must not collect the token.
func CheckListener(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("the dashboard's address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil {
		addrs, err := net.LookupHost(host)
		if err != nil || len(addrs) == 0 {
			return nil // the dial that follows says what is wrong
		}
		host = addrs[0]
	}
	uid := socktable.ListenerUID(net.JoinHostPort(host, port))
	if uid != socktable.Unknown && uid != os.Geteuid() {
		return fmt.Errorf("%s is held by another account (uid %d), not by buddi: the command line keeps its token to itself; stop what holds the port and start buddi serve", addr, uid)
	}
	return nil
}
