// Package db opens buddi's connection pools and describes a database target for people:
// where it is, with any password masked, and whether it answers.
package db

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ConnectTimeout bounds each attempt to reach the server, so an unreachable host fails
// quickly instead of hanging.
const ConnectTimeout = 5 * time.Second

// Options tune a pool.
type Options struct {
	// Name shows in pg_stat_activity as application_name. Default "buddi".
	Name string
	// MaxConns caps the pool. Default 10.
	MaxConns int32
}

// Open connects a pool to dsn and proves the server answers. Its error names the target with
// the password masked.
func Open(ctx context.Context, dsn string, opts Options) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("the database URL %s is not valid: %s", Mask(dsn), firstLine(err))
	}
	if opts.Name == "" {
		opts.Name = "buddi"
	}
	if opts.MaxConns == 0 {
		opts.MaxConns = 10
	}
	cfg.MaxConns = opts.MaxConns
	cfg.ConnConfig.ConnectTimeout = ConnectTimeout
	cfg.ConnConfig.RuntimeParams["application_name"] = opts.Name
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", Describe(dsn), err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, ConnectTimeout+time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, &UnreachableError{Target: Mask(dsn), Err: err}
	}
	return pool, nil
}

// UnreachableError says the server at Target did not answer.
type UnreachableError struct {
	Target string // the DSN, password masked
	Err    error  // why the ping failed
}

// Error says what happened in one sentence.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the database at %s (%s): check that it is running and that DATABASE_URL is right", e.Target, cause(e.Err))
}

// Unwrap gives the cause, for errors.Is and errors.As.
func (e *UnreachableError) Unwrap() error { return e.Err }

// cause is the innermost useful part of a connection error, on one line.
func cause(err error) string {
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return "no answer within " + ConnectTimeout.String()
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Message
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		return opErr.Err.Error()
	}
	msg := firstLine(err)
	// pgconn prefixes "failed to connect to `user=… database=…`:" — the target is already named.
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Describe names a database target for a person: host (or socket directory), port, database
// and user, never the password.
func Describe(dsn string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return Mask(dsn)
	}
	host := cfg.Host
	if strings.HasPrefix(host, "/") {
		return fmt.Sprintf("socket %s (database %s, user %s)", host, cfg.Database, cfg.User)
	}
	return fmt.Sprintf("%s (database %s, user %s)", net.JoinHostPort(host, fmt.Sprint(cfg.Port)), cfg.Database, cfg.User)
}

var kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// Mask returns dsn with any password replaced by "xxxxx", in URL or key=value form.
func Mask(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	return kvPassword.ReplaceAllString(dsn, "${1}xxxxx")
}
