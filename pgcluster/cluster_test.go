package pgcluster

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func newTestCluster(t *testing.T, dir string) *Cluster {
	t.Helper()
	if _, err := FindBinaries(""); err != nil {
		t.Fatalf("these tests need PostgreSQL server binaries: %v", err)
	}
	c := New(Options{Dir: dir, Fast: true, DieWithParent: true})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = c.Stop(ctx)
	})
	return c
}

func startCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func query(t *testing.T, c *Cluster) string {
	t.Helper()
	ctx := startCtx(t)
	conn := ownerConn(t, ctx, c)
	defer conn.Close(ctx)
	var user string
	if err := conn.QueryRow(ctx, "select current_user").Scan(&user); err != nil {
		t.Fatalf("query: %v", err)
	}
	return user
}

// ownerConn connects to the postgres database as the owner, with the password from its file.
func ownerConn(t *testing.T, ctx context.Context, c *Cluster) *pgx.Conn {
	t.Helper()
	dsn, err := c.OwnerDSN("postgres")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return conn
}

func TestStartStopRestart(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pg")
	c := newTestCluster(t, dir)
	if c.Initialized() {
		t.Fatal("fresh directory reports initialised")
	}
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatalf("first start: %v", err)
	}
	if got := query(t, c); got != Owner {
		t.Errorf("current_user = %q, want %q", got, Owner)
	}
	if !c.Initialized() {
		t.Error("cluster not initialised after start")
	}
	pid := c.Pid()
	if err := c.Stop(context.Background()); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if alive(pid) {
		t.Fatalf("postgres pid %d still alive after Stop", pid)
	}
	if c.Pid() != 0 {
		t.Error("Pid() non-zero after stop")
	}
	// The second start reuses the cluster: no initdb.
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatalf("second start: %v", err)
	}
	if got := query(t, c); got != Owner {
		t.Errorf("after restart current_user = %q", got)
	}
}

// A buddi killed with -9 leaves its postgres running; the next start must take over.
func TestStartRecoversServerLeftRunning(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pg")
	first := newTestCluster(t, dir)
	if err := first.Start(startCtx(t)); err != nil {
		t.Fatalf("start: %v", err)
	}
	orphan := first.Pid()

	second := newTestCluster(t, dir)
	if err := second.Start(startCtx(t)); err != nil {
		t.Fatalf("start over a running server: %v", err)
	}
	if alive(orphan) {
		t.Errorf("the earlier server (pid %d) is still running", orphan)
	}
	if second.Pid() == 0 || second.Pid() == orphan {
		t.Errorf("second cluster pid = %d, want a new server", second.Pid())
	}
	if got, ok := RunningPid(dir); !ok || got != second.Pid() {
		t.Errorf("RunningPid = %d,%v; want %d", got, ok, second.Pid())
	}
	query(t, second)
}

func TestStartClearsStalePidFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pg")
	c := newTestCluster(t, dir)
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatalf("start: %v", err)
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatalf("stop: %v", err)
	}
	// A pid file naming a process that is not postgres: the pid of a finished child.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := strconv.Itoa(dead.Process.Pid) + "\n" + c.DataDir() + "\n"
	if err := os.WriteFile(filepath.Join(c.DataDir(), "postmaster.pid"), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	// And one naming a live process that is not postgres (this test binary).
	self := strconv.Itoa(os.Getpid()) + "\n" + c.DataDir() + "\n"
	for _, content := range []string{stale, self} {
		if err := os.WriteFile(filepath.Join(c.DataDir(), "postmaster.pid"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := c.Start(startCtx(t)); err != nil {
			t.Fatalf("start with pid file %q: %v", strings.SplitN(content, "\n", 2)[0], err)
		}
		query(t, c)
		if err := c.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFindBinariesOverrideWithoutServer(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	_, err := FindBinaries(empty)
	if !errors.Is(err, ErrNoBinaries) {
		t.Fatalf("err = %v, want ErrNoBinaries", err)
	}
	msg := err.Error()
	for _, want := range []string{empty, "install PostgreSQL", "DATABASE_URL"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not mention %q", msg, want)
		}
	}
	if strings.Count(msg, ".") > 1 && strings.Contains(msg, "\n") {
		t.Errorf("message is not one sentence: %q", msg)
	}
}

func TestSocketPathTooLong(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	c := New(Options{Dir: dir})
	err := c.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "BUDDI_HOME") {
		t.Fatalf("err = %v, want advice on BUDDI_HOME", err)
	}
}

// A postmaster killed with -9 leaves its backends running for a moment, holding the shared
// memory; the next start must clear them rather than fail.
func TestStartAfterPostmasterKilled(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pg")
	c := newTestCluster(t, dir)
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatal(err)
	}
	// Open sessions, so backends exist when the postmaster dies.
	ctx := startCtx(t)
	var conns []*pgx.Conn
	for range 3 {
		conns = append(conns, ownerConn(t, ctx, c))
	}
	key, _, ok := shmOf(filepath.Join(c.DataDir(), "postmaster.pid"))
	if !ok {
		t.Fatal("no shared memory key in postmaster.pid")
	}
	if len(attachedTo(key, c.serverUID())) < 2 {
		t.Fatalf("attachedTo(%d) = %v: want the postmaster and its backends", key, attachedTo(key, c.serverUID()))
	}
	// Stop the backends first, so they are still attached when the postmaster dies: the
	// state a kill -9 races into.
	backends := attachedTo(key, c.serverUID())
	for _, p := range backends {
		if p != c.Pid() {
			_ = syscall.Kill(p, syscall.SIGSTOP)
		}
	}
	if err := syscall.Kill(c.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatalf("start after the postmaster was killed: %v", err)
	}
	for _, p := range backends {
		if p != c.Pid() && alive(p) {
			t.Errorf("backend %d of the killed server still runs", p)
		}
	}
	query(t, c)
	for _, conn := range conns {
		conn.Close(context.Background())
	}
}
