package pgcluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// oldCluster makes a cluster the way buddi did before passwords: initdb with trust and the
// superuser buddi, no application role, and a database with a row in it.
func oldCluster(t *testing.T, dir string) {
	t.Helper()
	c := newTestCluster(t, dir)
	ctx := startCtx(t)
	if err := c.prepare(); err != nil {
		t.Fatal(err)
	}
	cmd := c.command("initdb", "-D", c.DataDir(), "-U", Owner, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-instructions", "--no-sync")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v: %s", err, out)
	}
	if err := c.spawn(ctx, ""); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, c.dsnWith(Owner, "", "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{"CREATE DATABASE buddi", "CREATE ROLE keep NOLOGIN"} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(ctx)
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	hba, _ := os.ReadFile(filepath.Join(c.DataDir(), "pg_hba.conf"))
	if !strings.Contains(string(hba), "trust") {
		t.Fatalf("the old cluster's pg_hba.conf trusts nothing: %s", hba)
	}
	for _, role := range []string{Owner, App} {
		if _, err := os.Lstat(c.PasswordFile(role)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the old cluster has a password file for %s", role)
		}
	}
}

// A cluster made by an earlier buddi is converted on its first start and keeps its data.
func TestConvertTrustCluster(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pg")
	oldCluster(t, dir)
	c := newTestCluster(t, dir)
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatalf("first start of an old cluster: %v", err)
	}
	assertPasswordAuth(t, c)
	ctx := startCtx(t)
	conn := ownerConn(t, ctx, c)
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_roles WHERE rolname = 'keep'").Scan(&n); err != nil || n != 1 {
		t.Errorf("the old cluster's contents: %d, %v", n, err)
	}
}

// A conversion cut short at any step finishes on the next start, and never leaves a server
// running that trusts its socket.
func TestConvertInterrupted(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"passwords", "hba"} {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "pg")
			oldCluster(t, dir)
			c := newTestCluster(t, dir)
			cut := errors.New("cut short")
			c.testHook = func(s string) error {
				if s == step {
					return cut
				}
				return nil
			}
			if err := c.Start(startCtx(t)); !errors.Is(err, cut) {
				t.Fatalf("start cut short at %s = %v", step, err)
			}
			if pid, ok := RunningPid(dir); ok || c.Pid() != 0 {
				t.Fatalf("a server (pid %d) still runs after the conversion was cut short", pid)
			}
			c.testHook = nil
			if err := c.Start(startCtx(t)); err != nil {
				t.Fatalf("start after a conversion cut short at %s: %v", step, err)
			}
			assertPasswordAuth(t, c)
			// And again, now that there is nothing left to do.
			if err := c.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := c.Start(startCtx(t)); err != nil {
				t.Fatal(err)
			}
			assertPasswordAuth(t, c)
		})
	}
}

// A start with pg_hba.conf put back to trust (by hand, or by the account that owns the data
// directory) restores password authentication.
func TestStartRestoresPasswordAuth(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, filepath.Join(t.TempDir(), "pg"))
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatal(err)
	}
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
}

// A password file lost after the conversion: the start fails with a sentence, the server
// stops, and the old passwords still stand.
func TestStartWithLostPassword(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, filepath.Join(t.TempDir(), "pg"))
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(c.PasswordFile(Owner))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(c.PasswordFile(Owner)); err != nil {
		t.Fatal(err)
	}
	err = c.Start(startCtx(t))
	if err == nil || !strings.Contains(err.Error(), c.PasswordFile(Owner)) {
		t.Fatalf("start with a new owner's password = %v, want a refusal naming the file", err)
	}
	if c.Pid() != 0 {
		t.Error("the server still runs")
	}
	if err := os.WriteFile(c.PasswordFile(Owner), saved, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatalf("start with the original file back: %v", err)
	}
	assertPasswordAuth(t, c)

	// Or the reset the refusal advises: both files gone, trust for one start.
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{Owner, App} {
		if err := os.Remove(c.PasswordFile(role)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.writeDataFile("pg_hba.conf", strings.ReplaceAll(hbaConf, "scram-sha-256", "trust")); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatalf("start after the reset: %v", err)
	}
	assertPasswordAuth(t, c)
	if now, _ := os.ReadFile(c.PasswordFile(Owner)); string(now) == string(saved) {
		t.Error("the reset kept the old password")
	}
}
