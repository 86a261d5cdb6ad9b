package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// connectAs opens a connection to the cluster's socket as user with exactly password (none
// when empty), ignoring PGPASSWORD and ~/.pgpass.
func connectAs(ctx context.Context, c *Cluster, user, password string) (*pgconn.PgConn, error) {
	cfg, err := pgconn.ParseConfig(fmt.Sprintf("host=%s port=%d user=%s dbname=postgres sslmode=disable", c.SocketDir(), port, user))
	if err != nil {
		return nil, err
	}
	cfg.Password = password
	return pgconn.ConnectConfig(ctx, cfg)
}

// isAuthError reports whether err is the server refusing the credentials.
func isAuthError(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "28P01" || pgErr.Code == "28000")
}

// A process of the same account that reaches the socket gets nowhere without the password.
func TestSocketNeedsPassword(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, filepath.Join(t.TempDir(), "pg"))
	ctx := startCtx(t)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, user := range []string{"buddi", "buddi_app"} {
		for _, pw := range []string{"", "wrong-password"} {
			conn, err := connectAs(ctx, c, user, pw)
			if err == nil {
				conn.Close(ctx)
				t.Errorf("user %s with password %q: connected", user, pw)
				continue
			}
			if !isAuthError(err) {
				t.Errorf("user %s with password %q: %v, want an authentication error", user, pw, err)
			}
		}
	}
}

// ownerExec runs statements as the owner on the postgres database.
func ownerExec(t *testing.T, c *Cluster, sqls ...string) {
	t.Helper()
	ctx := startCtx(t)
	conn := ownerConn(t, ctx, c)
	defer conn.Close(ctx)
	for _, sql := range sqls {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
}

// assertPasswordAuth checks that the running cluster lets each role in with its password
// only, and that pg_hba.conf trusts nothing.
func assertPasswordAuth(t *testing.T, c *Cluster) {
	t.Helper()
	ctx := startCtx(t)
	for _, role := range []string{Owner, App} {
		pw, err := readPassword(c.PasswordFile(role))
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"", "wrong-password", pw + "x"} {
			conn, err := connectAs(ctx, c, role, bad)
			if err == nil {
				conn.Close(ctx)
				t.Errorf("%s with password %q: let in", role, bad)
			} else if !isAuthError(err) {
				t.Errorf("%s with password %q: %v, want an authentication error", role, bad, err)
			}
		}
		conn, err := connectAs(ctx, c, role, pw)
		if err != nil {
			t.Errorf("%s with its password: %v", role, err)
		} else {
			conn.Close(ctx)
		}
	}
	hba, err := os.ReadFile(filepath.Join(c.DataDir(), "pg_hba.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if string(hba) != hbaConf {
		t.Errorf("pg_hba.conf = %q, want %q", hba, hbaConf)
	}
	for _, line := range strings.Split(string(hba), "\n") {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") && f[len(f)-1] != "scram-sha-256" {
			t.Errorf("pg_hba.conf line %q does not ask for a password", line)
		}
	}
}

func TestNewClusterUsesPasswords(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	c := newTestCluster(t, filepath.Join(base, "pg"))
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatal(err)
	}
	assertPasswordAuth(t, c)
	if _, err := os.Lstat(filepath.Join(c.opts.Dir, initPwfile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("initdb's password file is still there: %v", err)
	}
	owner, _ := readPassword(c.PasswordFile(Owner))
	app, _ := readPassword(c.PasswordFile(App))
	if owner == app {
		t.Error("the two roles share a password")
	}
	for _, role := range []string{Owner, App} {
		path := c.PasswordFile(role)
		if filepath.Dir(path) != base {
			t.Errorf("%s's password file %s is not beside the cluster's directory", role, path)
		}
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); fi.Mode() != 0o600 || int(st.Uid) != os.Geteuid() {
			t.Errorf("%s: mode %v uid %d, want 0600 and this account's", path, fi.Mode(), st.Uid)
		}
	}
	// Neither password is anywhere in the data directory or the server's log.
	_ = filepath.WalkDir(c.opts.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && (strings.Contains(string(b), owner) || strings.Contains(string(b), app)) {
			t.Errorf("%s holds a password", p)
		}
		return nil
	})
	if b, _ := os.ReadFile(c.LogFile()); strings.Contains(string(b), owner) || strings.Contains(string(b), app) {
		t.Error("the server's log holds a password")
	}
}

// The application role is what it must be, and a start puts it back when it was changed.
func TestAppRoleIsPutBack(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, filepath.Join(t.TempDir(), "pg"))
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		ctx := startCtx(t)
		conn := ownerConn(t, ctx, c)
		defer conn.Close(ctx)
		var attrs string
		err := conn.QueryRow(ctx, `SELECT format('%s %s %s %s %s %s %s %s', rolsuper, rolinherit, rolcreaterole, rolcreatedb,
			rolcanlogin, rolreplication, rolbypassrls, rolconnlimit) FROM pg_roles WHERE rolname = $1`, App).Scan(&attrs)
		if err != nil {
			t.Fatal(err)
		}
		if attrs != "f f f f t f f -1" {
			t.Errorf("%s: %s's attributes (super inherit createrole createdb login replication bypassrls connlimit) = %s", when, App, attrs)
		}
		var groups int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_auth_members WHERE member = $1::regrole`, App).Scan(&groups); err != nil || groups != 0 {
			t.Errorf("%s: %s is a member of %d roles (%v)", when, App, groups, err)
		}
	}
	check("new")
	ownerExec(t, c,
		"ALTER ROLE buddi_app SUPERUSER CREATEDB CREATEROLE BYPASSRLS INHERIT",
		"GRANT pg_read_server_files, pg_execute_server_program TO buddi_app",
		"GRANT buddi TO buddi_app",
		"ALTER ROLE buddi_app PASSWORD 'someone-elses'",
	)
	// The server's own verifier of a password matches by verifierMatches, as ours match by it.
	func() {
		ctx := startCtx(t)
		conn := ownerConn(t, ctx, c)
		defer conn.Close(ctx)
		var stored string
		if err := conn.QueryRow(ctx, "SELECT rolpassword FROM pg_authid WHERE rolname = $1", App).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if !verifierMatches(stored, "someone-elses") || verifierMatches(stored, "someone-else") {
			t.Errorf("the server's verifier %s and verifierMatches disagree", stored)
		}
	}()
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatal(err)
	}
	check("after a start")
	assertPasswordAuth(t, c)
}

// What the application role cannot do on the cluster, whatever it is granted on buddi's tables.
func TestAppRoleCannot(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, filepath.Join(t.TempDir(), "pg"))
	ctx := startCtx(t)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	dsn, err := c.AppDSN("postgres")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, sql := range []string{
		"SET session_replication_role = replica",
		"SET SESSION AUTHORIZATION buddi",
		"SET ROLE buddi",
		"CREATE DATABASE other",
		"CREATE ROLE other",
		"ALTER ROLE buddi_app SUPERUSER",
		"ALTER SYSTEM SET log_statement = 'all'",
		"COPY (SELECT 1) TO PROGRAM 'true'",
		"SELECT pg_read_file('pg_hba.conf')",
		"SELECT rolpassword FROM pg_authid",
	} {
		if _, err := conn.Exec(ctx, sql); err == nil {
			t.Errorf("%s: allowed", sql)
		}
	}
}

// A password file buddi did not write the way it writes them is refused.
func TestReadPasswordRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	pw, err := readOrCreatePassword(good)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := readOrCreatePassword(good); err != nil || again != pw {
		t.Fatalf("second read = %q, %v; want the first password", again, err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte(pw), 0o644); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	quote := filepath.Join(dir, "quote")
	if err := os.WriteFile(quote, []byte(strings.Repeat("a", 40)+"' user=x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, open, short, quote, dir} {
		if got, err := readPassword(p); err == nil {
			t.Errorf("%s: read %q", p, got)
		}
	}
	if os.Geteuid() == 0 {
		other := filepath.Join(dir, "other")
		if err := os.WriteFile(other, []byte(pw), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := readPassword(other); err == nil {
			t.Error("a password file of another account was read")
		}
	}
}

func TestScramVerifier(t *testing.T) {
	t.Parallel()
	v, err := newScramVerifier("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !verifierMatches(v, "correct horse") {
		t.Errorf("%s does not match its password", v)
	}
	for _, bad := range []string{"correct horsE", ""} {
		if verifierMatches(v, bad) {
			t.Errorf("%s matches %q", v, bad)
		}
	}
	for _, stored := range []string{"", "md5abc", "SCRAM-SHA-256$", "SCRAM-SHA-256$x:y$z:w", "SCRAM-SHA-256$99999999:AAAA$a:b"} {
		if verifierMatches(stored, "correct horse") {
			t.Errorf("%q matches", stored)
		}
	}
}

// Even with every statement logged, what a start sends the server holds no password.
func TestPasswordsNeverLogged(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, filepath.Join(t.TempDir(), "pg"))
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatal(err)
	}
	ownerExec(t, c,
		"ALTER SYSTEM SET log_statement = 'all'",
		"ALTER ROLE buddi PASSWORD NULL",
		"ALTER ROLE buddi_app PASSWORD NULL",
	)
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.writeDataFile("pg_hba.conf", "local all all trust\n"); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatal(err)
	}
	assertPasswordAuth(t, c)
	log, err := os.ReadFile(c.LogFile())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "ALTER ROLE") {
		t.Fatal("the statements that set the passwords were not logged: the test shows nothing")
	}
	for _, role := range []string{Owner, App} {
		pw, _ := readPassword(c.PasswordFile(role))
		if strings.Contains(string(log), pw) {
			t.Errorf("the server's log holds %s's password", role)
		}
	}
}

// verifierMatches reads what the database holds: it never panics, and it matches a verifier
// only to its own password.
func FuzzVerifierMatches(f *testing.F) {
	v, _ := scramVerifier("password-one", []byte("0123456789abcdef"), 16)
	f.Add(v, "password-one")
	f.Add("SCRAM-SHA-256$4096:c2FsdA==$a:b", "x")
	f.Add("SCRAM-SHA-256$0:$:", "")
	f.Add("md5d41d8cd98f00b204e9800998ecf8427e", "x")
	f.Fuzz(func(t *testing.T, stored, password string) {
		// Counts up to a million are accepted and slow: keep the fuzzer to small ones.
		if rest, ok := strings.CutPrefix(stored, "SCRAM-SHA-256$"); ok {
			if it, _, _ := strings.Cut(rest, ":"); len(it) > 4 {
				t.Skip()
			}
		}
		if verifierMatches(stored, password) && verifierMatches(stored, password+"x") {
			t.Errorf("%q matches both %q and %q", stored, password, password+"x")
		}
	})
}

// Processes creating the password file at once all read the one password, never a file
// caught between its creation and its writing (which would read as damaged).
func TestConcurrentFirstReadsAgree(t *testing.T) {
	t.Parallel()
	for round := range 40 {
		path := filepath.Join(t.TempDir(), "pw")
		got := make([]string, 8)
		errs := make([]error, len(got))
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() { got[i], errs[i] = readOrCreatePassword(path) })
		}
		wg.Wait()
		for i := range got {
			if errs[i] != nil {
				t.Fatalf("round %d: %v", round, errs[i])
			}
			if got[i] != got[0] {
				t.Fatalf("round %d: concurrent first reads disagree: %q", round, got)
			}
		}
	}
}
