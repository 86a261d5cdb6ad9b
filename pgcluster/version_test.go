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

// fakeServer makes dir a bindir whose postgres prints version to --version, as a real one does.
func fakeServer(t *testing.T, dir, version string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho 'postgres (PostgreSQL) " + version + "'\n"
	for _, name := range []string{"initdb", "postgres"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fakeCluster makes clusterDir/data/PG_VERSION hold major.
func fakeCluster(t *testing.T, clusterDir, major string) {
	t.Helper()
	data := filepath.Join(clusterDir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "PG_VERSION"), []byte(major+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestFindBinariesForTheClustersVersion(t *testing.T) {
	root := t.TempDir()
	debian := filepath.Join(root, "usr/lib/postgresql")
	deb13 := fakeServer(t, filepath.Join(debian, "13/bin"), "13.16 (Debian 13.16-0+deb11u1)")
	deb16 := fakeServer(t, filepath.Join(debian, "16/bin"), "16.4 (Debian 16.4-1.pgdg120+1)")
	brew := filepath.Join(root, "opt/homebrew/opt")
	brew14 := fakeServer(t, filepath.Join(brew, "postgresql@14/bin"), "14.13 (Homebrew)")
	// Neither pg_config's nor PATH's directory says its version: postgres --version does.
	pgConfig := fakeServer(t, filepath.Join(root, "pgconfig/bin"), "12.20")
	onPath := fakeServer(t, filepath.Join(root, "path/bin"), "9.6.24")
	s := search{
		globs:    []string{debian + "/*/bin", brew + "/postgresql@*/bin"},
		pgConfig: func() string { return pgConfig },
		path:     func() string { return onPath },
	}

	got := s.installs()
	want := []Install{{deb16, "16"}, {brew14, "14"}, {deb13, "13"}, {pgConfig, "12"}, {onPath, "9.6"}}
	if len(got) != len(want) {
		t.Fatalf("installs = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("installs[%d] = %v, want %v", i, got[i], want[i])
		}
	}

	tests := []struct {
		name    string
		cluster string // PG_VERSION, "" for no cluster
		want    string
	}{
		{"no cluster takes the newest", "", deb16},
		{"newest", "16", deb16},
		{"older Debian", "13", deb13},
		{"Homebrew", "14", brew14},
		{"pg_config", "12", pgConfig},
		{"before 10 on PATH", "9.6", onPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pg")
			if tt.cluster != "" {
				fakeCluster(t, dir, tt.cluster)
			}
			bin, err := s.find("", dir)
			if err != nil {
				t.Fatalf("find: %v", err)
			}
			if bin != tt.want {
				t.Errorf("got %s, want %s", bin, tt.want)
			}
		})
	}
}

func TestFindBinariesForAMissingVersion(t *testing.T) {
	root := t.TempDir()
	debian := filepath.Join(root, "usr/lib/postgresql")
	fakeServer(t, filepath.Join(debian, "15/bin"), "15.8")
	s := search{globs: []string{debian + "/*/bin"}}
	dir := filepath.Join(root, "home/pg")

	t.Run("older", func(t *testing.T) {
		fakeCluster(t, dir, "9")
		_, err := s.find("", dir)
		var ve *VersionError
		if !errors.As(err, &ve) || !errors.Is(err, ErrNoBinaries) {
			t.Fatalf("err = %v, want a VersionError that is ErrNoBinaries", err)
		}
		want := "The database in " + filepath.Join(dir, "data") + " was made by PostgreSQL 9, and only 15 is installed here: install postgresql-9 (apt-get install postgresql-9), or run `buddi db upgrade` to move it to 15 (a backup is taken first)."
		if err.Error() != want {
			t.Errorf("got  %q\nwant %q", err.Error(), want)
		}
	})
	t.Run("newer", func(t *testing.T) {
		fakeCluster(t, dir, "18")
		_, err := s.find("", dir)
		if err == nil || !strings.Contains(err.Error(), "made by PostgreSQL 18, newer than the 15 installed here: install postgresql-18") {
			t.Fatalf("err = %v, want the newer-cluster sentence", err)
		}
		if strings.Contains(err.Error(), "db upgrade") {
			t.Errorf("a newer cluster cannot be upgraded down: %v", err)
		}
	})
	t.Run("override of another version", func(t *testing.T) {
		fakeCluster(t, dir, "13")
		other := fakeServer(t, filepath.Join(root, "custom/bin"), "15.8")
		_, err := s.find(other, dir)
		var ve *VersionError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), "BUDDI_PG_BINDIR ("+other+") holds PostgreSQL 15") {
			t.Fatalf("err = %v, want the override's sentence", err)
		}
	})
	t.Run("override of the same version wins", func(t *testing.T) {
		fakeCluster(t, dir, "13")
		mine := fakeServer(t, filepath.Join(root, "mine/bin"), "13.2")
		bin, err := s.find(mine, dir)
		if err != nil || bin != mine {
			t.Fatalf("find = %s, %v; want %s", bin, err, mine)
		}
	})
	t.Run("a damaged PG_VERSION", func(t *testing.T) {
		fakeCluster(t, dir, "sixteen")
		if _, err := s.find("", dir); err == nil || !strings.Contains(err.Error(), "holds no PostgreSQL version") {
			t.Fatalf("err = %v, want the damaged-directory sentence", err)
		}
	})
	t.Run("nothing installed", func(t *testing.T) {
		fakeCluster(t, dir, "15")
		empty := search{globs: []string{filepath.Join(root, "none/*/bin")}}
		if _, err := empty.find("", dir); !errors.As(err, new(*NoBinariesError)) {
			t.Fatalf("err = %v, want NoBinariesError", err)
		}
	})
}

func TestParseServerVersion(t *testing.T) {
	tests := []struct{ out, want string }{
		{"postgres (PostgreSQL) 16.4 (Debian 16.4-1.pgdg120+1)\n", "16"},
		{"postgres (PostgreSQL) 17beta1\n", "17"},
		{"postgres (PostgreSQL) 9.6.24\n", "9.6"},
		{"postgres (PostgreSQL) 10.23\n", "10"},
		{"something else", ""},
	}
	for _, tt := range tests {
		if got := parseServerVersion(tt.out); got != tt.want {
			t.Errorf("parseServerVersion(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
}

// TestUpgradeWithPgUpgrade runs the whole upgrade with real clusters: from the installed
// version to itself when only one is installed (pg_upgrade accepts that), else from the oldest
// to the newest. The data and both roles' passwords survive, and the old cluster is kept.
func TestUpgradeWithPgUpgrade(t *testing.T) {
	all := Installed()
	if len(all) == 0 {
		t.Fatal("this test needs PostgreSQL server binaries")
	}
	from, to := all[len(all)-1], all[0]
	if from == to {
		t.Logf("only PostgreSQL %s is installed: upgrading %s to itself (two majors would test a real version change)", to.Major, to.Major)
	}
	if _, err := os.Stat(filepath.Join(to.BinDir, "pg_upgrade")); err != nil {
		t.Skipf("no pg_upgrade in %s", to.BinDir)
	}
	dir := filepath.Join(t.TempDir(), "pg")
	c := New(Options{Dir: dir, BinDir: from.BinDir, Fast: true, DieWithParent: true})
	ctx := startCtx(t)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	conn := ownerConn(t, ctx, c)
	if _, err := conn.Exec(ctx, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('before the upgrade')"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	var lines []string
	res, err := upgrade(ctx, UpgradeOptions{Dir: dir, Fast: true, Progress: func(l string) { t.Log(l); lines = append(lines, l) }}, from, to)
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	if res.From != from.Major || res.To != to.Major || res.Kept != dir+".old-"+from.Major {
		t.Errorf("result = %+v", res)
	}
	if len(lines) < 4 {
		t.Errorf("progress lines = %q, want one a step", lines)
	}
	if major, _ := ClusterMajor(res.Kept); major != from.Major {
		t.Errorf("kept cluster's version = %q, want %s", major, from.Major)
	}
	for _, leftover := range []string{dir + ".upgrade", dir + ".upgrade-owner.password", dir + ".upgrade-app.password"} {
		if _, err := os.Lstat(leftover); err == nil {
			t.Errorf("%s is left behind", leftover)
		}
	}

	after := New(Options{Dir: dir, BinDir: to.BinDir, Fast: true, DieWithParent: true})
	t.Cleanup(func() { _ = after.Stop(context.Background()) })
	if err := after.Start(ctx); err != nil {
		t.Fatalf("start the upgraded cluster: %v", err)
	}
	conn = ownerConn(t, ctx, after)
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != "before the upgrade" {
		t.Fatalf("row after the upgrade = %q, %v", v, err)
	}
	appDSN, err := after.AppDSN("postgres")
	if err != nil {
		t.Fatal(err)
	}
	app, err := pgx.Connect(ctx, appDSN)
	if err != nil {
		t.Fatalf("the application role's password after the upgrade: %v", err)
	}
	app.Close(ctx)
}

func TestUpgradeNothingToDo(t *testing.T) {
	if _, err := Upgrade(context.Background(), UpgradeOptions{Dir: filepath.Join(t.TempDir(), "pg")}); err == nil || !strings.Contains(err.Error(), "nothing to upgrade") {
		t.Fatalf("err = %v, want nothing to upgrade", err)
	}
}

func TestInstallsThroughLinksAreOne(t *testing.T) {
	root := t.TempDir()
	real := fakeServer(t, filepath.Join(root, "usr/lib/postgresql/15/bin"), "15.8")
	links := filepath.Join(root, "usr/local/bin")
	if err := os.MkdirAll(links, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"initdb", "postgres"} {
		if err := os.Symlink(filepath.Join(real, name), filepath.Join(links, name)); err != nil {
			t.Fatal(err)
		}
	}
	s := search{globs: []string{filepath.Join(root, "usr/lib/postgresql/*/bin")}, path: func() string { return links }}
	if got := s.installs(); len(got) != 1 || got[0].BinDir != real {
		t.Fatalf("installs = %v, want only %s", got, real)
	}
}

// TestUpgradeKeepsAnOlderCharacterType: a cluster an earlier buddi made with the C character
// type upgrades (pg_upgrade refuses a new cluster whose locale differs) and keeps it; a new
// cluster gets C.UTF-8.
func TestUpgradeKeepsAnOlderCharacterType(t *testing.T) {
	all := Installed()
	if len(all) == 0 {
		t.Fatal("this test needs PostgreSQL server binaries")
	}
	from, to := all[len(all)-1], all[0]
	if _, err := os.Stat(filepath.Join(to.BinDir, "pg_upgrade")); err != nil {
		t.Skipf("no pg_upgrade in %s", to.BinDir)
	}
	ctx := startCtx(t)
	ctypeOf := func(c *Cluster) string {
		t.Helper()
		conn := ownerConn(t, ctx, c)
		defer conn.Close(ctx)
		var ctype string
		if err := conn.QueryRow(ctx, "SELECT datctype FROM pg_database WHERE datname = 'postgres'").Scan(&ctype); err != nil {
			t.Fatal(err)
		}
		return ctype
	}

	fresh := New(Options{Dir: filepath.Join(t.TempDir(), "pg"), BinDir: to.BinDir, Fast: true, DieWithParent: true})
	if err := fresh.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ctypeOf(fresh); got != "C.UTF-8" {
		t.Errorf("a new cluster's character type is %q, want C.UTF-8", got)
	}
	if err := fresh.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(t.TempDir(), "pg")
	old := New(Options{Dir: dir, BinDir: from.BinDir, Fast: true, DieWithParent: true})
	old.initArgs = []string{"--lc-ctype=C"} // as an earlier buddi made it
	if err := old.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ctypeOf(old); got != "C" {
		t.Fatalf("the old cluster's character type is %q, want C", got)
	}
	if err := old.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := upgrade(ctx, UpgradeOptions{Dir: dir, Fast: true}, from, to); err != nil {
		t.Fatalf("upgrade of a C cluster: %v", err)
	}
	after := New(Options{Dir: dir, BinDir: to.BinDir, Fast: true, DieWithParent: true})
	t.Cleanup(func() { _ = after.Stop(context.Background()) })
	if err := after.Start(ctx); err != nil {
		t.Fatalf("start the upgraded cluster: %v", err)
	}
	if got := ctypeOf(after); got != "C" {
		t.Errorf("the upgraded cluster's character type is %q, want the old one's, C", got)
	}
}
