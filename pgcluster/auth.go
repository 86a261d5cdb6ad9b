package pgcluster

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"buddi/internal/securefile"
)

// Owner is the role initdb creates: the cluster's superuser, which owns buddi's database and
// every schema in it and runs the migrations. Nothing else connects as it.
const Owner = "buddi"

// App is the role buddi serve and the command line use for everything but migrations: it may
// log in and nothing more (no superuser, no databases, no roles, no replication, no bypassing
// row security, member of no role), owns nothing, and holds only the privileges the
// migrations grant it.
const App = "buddi_app"

// hbaConf is the whole of pg_hba.conf: the server listens on its unix socket only, and every
// connection there, for every role and database, proves its role's password.
const hbaConf = `# Written by buddi, which rewrites this file when it differs: every connection, on the
# server's unix socket (the only place it listens), proves its role's password.
local all all scram-sha-256
`

// scramIterations is PostgreSQL's own default for the verifiers it makes.
const scramIterations = 4096

// PasswordFile is the file that holds role's password: beside Dir, not in it, so that under
// root it sits in buddi's own directory, which the postgres account may search but whose
// 0600 files, root's, it cannot read.
func (c *Cluster) PasswordFile(role string) string {
	suffix := "-app.password"
	if role == Owner {
		suffix = "-owner.password"
	}
	return filepath.Clean(c.opts.Dir) + suffix
}

// OwnerDSN is a connection string for database as Owner, for migrations and set-up only.
// It holds the password: never print it.
func (c *Cluster) OwnerDSN(database string) (string, error) { return c.dsn(Owner, database) }

// AppDSN is a connection string for database as App. It holds the password: never print it.
func (c *Cluster) AppDSN(database string) (string, error) { return c.dsn(App, database) }

func (c *Cluster) dsn(role, database string) (string, error) {
	pw, err := readPassword(c.PasswordFile(role))
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("the database password file %s is missing: start `buddi serve` once to make it (if the cluster has one already, put the original file back)", c.PasswordFile(role))
	}
	if err != nil {
		return "", err
	}
	return c.dsnWith(role, pw, database), nil
}

func (c *Cluster) dsnWith(role, password, database string) string {
	return fmt.Sprintf("host=%s port=%d user=%s password='%s' dbname=%s sslmode=disable", c.SocketDir(), port, role, password, database)
}

// connConfig is a connection to database as role with exactly password: no PGPASSWORD, no
// ~/.pgpass.
func (c *Cluster) connConfig(role, password, database string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", c.SocketDir(), port, role, database))
	if err != nil {
		return nil, err
	}
	cfg.Password = password
	cfg.ConnectTimeout = 5 * time.Second
	return cfg, nil
}

// passwords reads both roles' passwords, making the files the first time.
func (c *Cluster) passwords() (owner, app string, err error) {
	if owner, err = readOrCreatePassword(c.PasswordFile(Owner)); err != nil {
		return "", "", err
	}
	if app, err = readOrCreatePassword(c.PasswordFile(App)); err != nil {
		return "", "", err
	}
	return owner, app, nil
}

// readOrCreatePassword returns the password in the file at path, creating the file (32 random
// bytes as unpadded base64url, mode 0600) when it does not exist. The file is published whole
// (internal/securefile), which fails when path exists: two processes racing agree on the
// winner's, and no reader sees the file before it holds the password.
func readOrCreatePassword(path string) (string, error) {
	for range 3 {
		pw, err := readPassword(path)
		if !errors.Is(err, os.ErrNotExist) {
			return pw, err
		}
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return "", fmt.Errorf("make a database password: %w", err)
		}
		pw = base64.RawURLEncoding.EncodeToString(raw)
		err = securefile.Create(path, []byte(pw+"\n"))
		if errors.Is(err, os.ErrExist) {
			continue // another process made it: read theirs
		}
		if err != nil {
			return "", fmt.Errorf("write the database password file %s: %w (check that BUDDI_HOME is writable)", path, err)
		}
		return pw, nil
	}
	return "", fmt.Errorf("read %s: it keeps appearing and disappearing", path)
}

// readPassword reads a password file made by readOrCreatePassword. The file must be a regular
// file of this account, readable by no one else, and not a link; a missing file is an error
// matching os.ErrNotExist.
func readPassword(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return "", fmt.Errorf("the database password file %s is a link: buddi reads its passwords only from a plain file (remove the link)", path)
		}
		if errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("read the database password file %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("read the database password file %s: %w", path, err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("the database password file %s is not a regular file: remove it", path)
	case fi.Mode().Perm()&0o077 != 0:
		return "", fmt.Errorf("the database password file %s can be read by other accounts (mode %v): run `chmod 600 %s`", path, fi.Mode().Perm(), path)
	case st != nil && int(st.Uid) != os.Geteuid():
		return "", fmt.Errorf("the database password file %s belongs to another account (uid %d): run buddi as the account that set it up", path, st.Uid)
	}
	text, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("read the database password file %s: %w", path, err)
	}
	pw := strings.TrimSpace(string(text))
	if !wellFormed(pw) {
		return "", fmt.Errorf("the database password file %s is damaged: put the original back, or remove it and start buddi (which then needs the passwords reset: it says how)", path)
	}
	return pw, nil
}

// wellFormed accepts what readOrCreatePassword writes: at least 32 characters of base64url,
// which need no quoting in a connection string and no normalisation in SCRAM.
func wellFormed(pw string) bool {
	if len(pw) < 32 {
		return false
	}
	for _, r := range pw {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// scramVerifier is what PostgreSQL stores for password under SCRAM-SHA-256 (RFC 5802, 7677),
// in its own notation: SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>. The server
// takes such a string as the password itself, so the password never reaches the server, its
// log or initdb.
func scramVerifier(password string, salt []byte, iterations int) (string, error) {
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		return "", err
	}
	clientKey := hmacSHA256(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	serverKey := hmacSHA256(salted, "Server Key")
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, b64(salt), b64(storedKey[:]), b64(serverKey)), nil
}

func newScramVerifier(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	return scramVerifier(password, salt, scramIterations)
}

func hmacSHA256(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// verifierMatches reports whether stored, a role's rolpassword, is a SCRAM-SHA-256 verifier
// of password.
func verifierMatches(stored, password string) bool {
	rest, ok := strings.CutPrefix(stored, "SCRAM-SHA-256$")
	if !ok {
		return false
	}
	params, _, ok := strings.Cut(rest, "$")
	if !ok {
		return false
	}
	iterText, saltText, ok := strings.Cut(params, ":")
	if !ok {
		return false
	}
	iterations, err := strconv.Atoi(iterText)
	if err != nil || iterations < 1 || iterations > 1<<20 {
		return false
	}
	salt, err := base64.StdEncoding.DecodeString(saltText)
	if err != nil {
		return false
	}
	want, err := scramVerifier(password, salt, iterations)
	return err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(stored)) == 1
}

// sqlLiteral quotes s as an SQL string literal (standard_conforming_strings is on).
func sqlLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// isAuthFailure reports whether err is the server refusing a role or its password.
func isAuthFailure(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "28P01" || pgErr.Code == "28000")
}

// secure brings a running cluster to password authentication: the owner's and the
// application role's passwords set from their files (as verifiers), the application role
// made or put back to what it must be, and pg_hba.conf rewritten to hbaConf and reloaded.
// Each step checks before it changes, so a cluster made by an earlier buddi (trust, an
// owner with no password) is converted on its first start, and a conversion cut short
// anywhere finishes on the next: the passwords are in place before trust goes.
func (c *Cluster) secure(ctx context.Context, ownerPW, appPW string) error {
	cfg, err := c.connConfig(Owner, ownerPW, "postgres")
	if err != nil {
		return err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if isAuthFailure(err) {
		return fmt.Errorf("the embedded database refuses the password in %s (was the file replaced?): put the original file back, or %s", c.PasswordFile(Owner), c.resetAdvice())
	}
	if err != nil {
		return fmt.Errorf("connect to the embedded database as %s: %w", Owner, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := c.setOwnerPassword(ctx, conn, ownerPW); err != nil {
		return err
	}
	if err := c.ensureAppRole(ctx, conn, appPW); err != nil {
		return err
	}
	if err := c.hook("passwords"); err != nil {
		return err
	}
	current, err := c.readDataFile("pg_hba.conf")
	if err != nil {
		return err
	}
	if current == hbaConf {
		return nil
	}
	c.log.Info("switching the embedded database to password authentication", "file", filepath.Join(c.DataDir(), "pg_hba.conf"))
	if err := c.writeDataFile("pg_hba.conf", hbaConf); err != nil {
		return err
	}
	if err := c.hook("hba"); err != nil {
		return err
	}
	var reloaded bool
	if err := conn.QueryRow(ctx, "SELECT pg_reload_conf()").Scan(&reloaded); err != nil || !reloaded {
		return fmt.Errorf("reload the embedded database's pg_hba.conf: %v", err)
	}
	return c.awaitPasswordRequired(ctx)
}

// resetAdvice says how the owner of the machine sets new passwords: trust for one start,
// which sets the passwords from the files and takes trust away again.
func (c *Cluster) resetAdvice() string {
	return fmt.Sprintf("to set new passwords, stop buddi, write trust for scram-sha-256 in %s, and start buddi again (it sets the passwords from the files and asks for them again)",
		filepath.Join(c.DataDir(), "pg_hba.conf"))
}

// setOwnerPassword gives Owner the verifier of password unless it already has one.
func (c *Cluster) setOwnerPassword(ctx context.Context, conn *pgx.Conn, password string) error {
	var stored *string
	if err := conn.QueryRow(ctx, "SELECT rolpassword FROM pg_authid WHERE rolname = $1", Owner).Scan(&stored); err != nil {
		return fmt.Errorf("read the %s role: %w", Owner, err)
	}
	if stored != nil && verifierMatches(*stored, password) {
		return nil
	}
	v, err := newScramVerifier(password)
	if err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "ALTER ROLE "+pgx.Identifier{Owner}.Sanitize()+" PASSWORD "+sqlLiteral(v)); err != nil {
		return fmt.Errorf("set the %s role's password: %w", Owner, err)
	}
	c.log.Info("set the database owner's password", "role", Owner)
	return nil
}

// appAttributes is what App must be, in CREATE ROLE and ALTER ROLE's words.
const appAttributes = "LOGIN NOSUPERUSER NOINHERIT NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS CONNECTION LIMIT -1"

// ensureAppRole makes App, or puts it back to appAttributes, password and no memberships.
func (c *Cluster) ensureAppRole(ctx context.Context, conn *pgx.Conn, password string) error {
	ident := pgx.Identifier{App}.Sanitize()
	var (
		exists                                  bool
		super, inherit, createRole, createDB    bool
		login, replication, bypassRLS, badLimit bool
		stored                                  *string
	)
	err := conn.QueryRow(ctx, `SELECT rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin, rolreplication,
		rolbypassrls, rolconnlimit <> -1, rolpassword FROM pg_authid WHERE rolname = $1`, App).
		Scan(&super, &inherit, &createRole, &createDB, &login, &replication, &bypassRLS, &badLimit, &stored)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return fmt.Errorf("read the %s role: %w", App, err)
	default:
		exists = true
	}
	if !exists {
		v, err := newScramVerifier(password)
		if err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, "CREATE ROLE "+ident+" "+appAttributes+" PASSWORD "+sqlLiteral(v)); err != nil {
			return fmt.Errorf("create the %s role: %w", App, err)
		}
		c.log.Info("created the application's database role", "role", App)
	} else {
		if super || inherit || createRole || createDB || !login || replication || bypassRLS || badLimit {
			c.log.Warn("the application's database role had attributes it must not have; putting them back", "role", App)
			if _, err := conn.Exec(ctx, "ALTER ROLE "+ident+" "+appAttributes); err != nil {
				return fmt.Errorf("reset the %s role: %w", App, err)
			}
		}
		if stored == nil || !verifierMatches(*stored, password) {
			v, err := newScramVerifier(password)
			if err != nil {
				return err
			}
			if _, err := conn.Exec(ctx, "ALTER ROLE "+ident+" PASSWORD "+sqlLiteral(v)); err != nil {
				return fmt.Errorf("set the %s role's password: %w", App, err)
			}
			c.log.Info("set the application role's password", "role", App)
		}
	}
	rows, err := conn.Query(ctx, `SELECT m.roleid::regrole::text FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.member WHERE r.rolname = $1`, App)
	if err != nil {
		return fmt.Errorf("read the %s role's memberships: %w", App, err)
	}
	groups, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("read the %s role's memberships: %w", App, err)
	}
	for _, g := range groups {
		c.log.Warn("the application's database role was a member of another role; revoking it", "role", App, "member_of", g)
		// regrole's text is already a quoted identifier where it needs one.
		if _, err := conn.Exec(ctx, "REVOKE "+g+" FROM "+ident); err != nil {
			return fmt.Errorf("revoke %s from the %s role: %w", g, App, err)
		}
	}
	return nil
}

// awaitPasswordRequired waits until the server has loaded the new pg_hba.conf: a connection
// with no password is refused.
func (c *Cluster) awaitPasswordRequired(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		cfg, err := c.connConfig(Owner, "", "postgres")
		if err != nil {
			return err
		}
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			conn.Close(ctx)
		} else if isAuthFailure(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the embedded database still lets a connection in without a password after reloading pg_hba.conf (see %s)", c.LogFile())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// hook is a test's way to stop a conversion at a named step.
func (c *Cluster) hook(step string) error {
	if c.testHook == nil {
		return nil
	}
	return c.testHook(step)
}
