// Package pgtest is for tests only: it gives each test its own migrated Postgres database.
//
// The first test that asks starts one throwaway cluster for the test binary (or uses the
// server at TEST_DATABASE_URL), migrates a template database once, and clones it for every
// test, so tests run in parallel against real Postgres. Call Main from TestMain: it stops the
// cluster and removes its directory when the tests end, leaving nothing behind.
package pgtest

import (
	"context"
	"fmt"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"buddi/db"
	"buddi/migrations"
	"buddi/pgcluster"
)

var (
	setupOnce sync.Once
	setupErr  error
	server    serverInfo
	cloneMu   sync.Mutex // CREATE DATABASE … TEMPLATE refuses a template another clone is reading
	counter   atomic.Int64
)

type serverInfo struct {
	adminDSN string // a maintenance connection to the server
	dsnFor   func(database string) string
	template string
	cluster  *pgcluster.Cluster
	dir      string
	lock     *os.File
}

// Main runs the package's tests, tears the shared server down, and fails the run when a
// goroutine was left behind. Use it as `func TestMain(m *testing.M) { pgtest.Main(m) }`.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain with its own clean-up to do: it returns the exit code.
func Run(m *testing.M) int {
	code := m.Run()
	teardown()
	http.DefaultClient.CloseIdleConnections()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: goroutines left behind:", err)
			code = 1
		}
	}
	return code
}

// DSN returns a connection string for a fresh database of the test's own, migrated to the
// current schema and dropped when the test ends.
func DSN(t testing.TB) string {
	t.Helper()
	return newDatabase(t, "")
}

// EmptyDSN is like DSN but the database has no schema at all, for tests of migrating.
func EmptyDSN(t testing.TB) string {
	t.Helper()
	return newDatabase(t, "template0")
}

// newDatabase clones template ("" for the migrated one) into a database of the test's own.
func newDatabase(t testing.TB, template string) string {
	t.Helper()
	setupOnce.Do(func() { setupErr = setup() })
	if setupErr != nil {
		t.Fatalf("pgtest: %v", setupErr)
	}
	name := fmt.Sprintf("t_%d_%d", os.Getpid(), counter.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if template == "" {
		template = server.template
	}
	if err := adminExec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, template), true); err != nil {
		t.Fatalf("pgtest: clone template: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := adminExec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)", false); err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
		}
	})
	return server.dsnFor(name)
}

// Pool returns a pool on a fresh database of the test's own (see DSN), closed when it ends.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	dsn := DSN(t)
	pool, err := db.Open(context.Background(), dsn, db.Options{Name: "pgtest", MaxConns: 8})
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func adminExec(ctx context.Context, sql string, clone bool) error {
	if clone {
		cloneMu.Lock()
		defer cloneMu.Unlock()
	}
	conn, err := pgx.Connect(ctx, server.adminDSN)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func setup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if url := os.Getenv("TEST_DATABASE_URL"); url != "" {
		if _, err := pgx.ParseConfig(url); err != nil {
			return fmt.Errorf("TEST_DATABASE_URL %s: %w", db.Mask(url), err)
		}
		server.adminDSN = url
		server.dsnFor = func(database string) string { return withDatabase(url, database) }
	} else {
		sweepAbandoned()
		dir, err := os.MkdirTemp("", "buddi-pgtest-")
		if err != nil {
			return err
		}
		if err := holdDir(dir); err != nil {
			return err
		}
		server.dir = dir
		c := pgcluster.New(pgcluster.Options{Dir: dir + "/pg", Fast: true, DieWithParent: true})
		if err := c.Start(ctx); err != nil {
			return fmt.Errorf("start test cluster: %w", err)
		}
		server.cluster = c
		// The test cluster's owner, a superuser, which every test connects as.
		if server.adminDSN, err = c.OwnerDSN("postgres"); err != nil {
			return err
		}
		server.dsnFor = func(database string) string {
			dsn, _ := c.OwnerDSN(database) // read above: the file is there
			return dsn
		}
	}
	server.template = fmt.Sprintf("template_buddi_%d", os.Getpid())
	if err := adminExec(ctx, "CREATE DATABASE "+server.template, false); err != nil {
		return fmt.Errorf("create template: %w", err)
	}
	pool, err := db.Open(ctx, server.dsnFor(server.template), db.Options{Name: "pgtest"})
	if err != nil {
		return err
	}
	_, err = migrations.Up(ctx, pool, nil)
	pool.Close()
	if err != nil {
		return fmt.Errorf("migrate template: %w", err)
	}
	return nil
}

// withDatabase swaps the database in a URL or key=value connection string.
func withDatabase(dsn, database string) string {
	if u, err := neturl.Parse(dsn); err == nil && u.Scheme != "" {
		u.Path = "/" + database
		return u.String()
	}
	return dsn + " dbname=" + database
}

func teardown() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if server.template != "" && server.cluster == nil {
		_ = adminExec(ctx, "DROP DATABASE IF EXISTS "+server.template+" WITH (FORCE)", false)
	}
	if server.cluster != nil {
		_ = server.cluster.Stop(ctx)
	}
	if server.dir != "" {
		_ = os.RemoveAll(server.dir)
	}
	if server.lock != nil {
		server.lock.Close()
	}
}

// Eventually polls cond every few milliseconds until it holds, failing t after a minute.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // the polling interval
	}
}

// sweepAbandoned removes the cluster directories of test binaries that died without their
// clean-up (a killed or timed-out run): their servers were stopped with them (Pdeathsig),
// but the directories stayed. A live binary holds an flock on its directory's lock file
// (see holdDir), which the kernel drops when it dies, in any PID namespace.
func sweepAbandoned() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "buddi-pgtest-*"))
	for _, d := range dirs {
		f, err := os.Open(filepath.Join(d, "lock"))
		if err != nil {
			continue // not (yet) one of ours with a lock: leave it
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			_ = os.RemoveAll(d)
		}
		f.Close()
	}
}

// holdDir takes the lock that marks dir as in use by this test binary until it exits.
func holdDir(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return err
	}
	server.lock = f // held (and the file kept open) for the binary's life
	return nil
}

// OwnCluster starts a cluster of the test's own, which it may kill or stop (the shared one
// must not be), with buddi's schema migrated into its database "buddi", committed
// synchronously; it returns the cluster and the owner's DSN of that database. The cluster
// stops when the test ends (resumed first, should the test leave it stopped).
func OwnCluster(t *testing.T) (*pgcluster.Cluster, string) {
	t.Helper()
	if _, err := pgcluster.FindBinaries(""); err != nil {
		t.Fatalf("this test needs PostgreSQL server binaries: %v", err)
	}
	c := pgcluster.New(pgcluster.Options{Dir: filepath.Join(t.TempDir(), "pg"), Fast: true, DieWithParent: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if pid := c.Pid(); pid != 0 {
			_ = syscall.Kill(-pid, syscall.SIGCONT) // a failed test may leave it stopped
		}
		_ = c.Stop(ctx)
	})
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	admin, err := c.OwnerDSN("postgres")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		"CREATE DATABASE buddi",
		// A test cluster runs without synchronous commit, and a killed postmaster would
		// take the last commits with it: these tests need what was committed to stay.
		"ALTER DATABASE buddi SET synchronous_commit = on",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(ctx)
	dsn, err := c.OwnerDSN("buddi")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := db.Open(ctx, dsn, db.Options{Name: "migrate"})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := migrations.Up(ctx, pool, nil); err != nil {
		t.Fatal(err)
	}
	return c, dsn
}
