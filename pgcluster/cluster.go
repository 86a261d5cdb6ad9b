package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/sys/unix"
)

// port is the number in the socket's file name; nothing listens on TCP.
const port = 5432

// maxSocketPath is the longest unix socket path Linux accepts (sun_path less its NUL).
const maxSocketPath = 107

// Options describe one cluster. The zero value of each field but Dir works.
type Options struct {
	// Dir holds the cluster: Dir/data (PGDATA) and Dir/run (the socket); the server's log is
	// Dir + ".log".
	Dir string
	// BinDir holds initdb and postgres. Empty means FindBinariesFor("", Dir).
	BinDir string
	// Log receives what the cluster does. Default: discard.
	Log *slog.Logger
	// Fast trades durability for speed (no fsync): for test clusters only.
	Fast bool
	// DieWithParent has the kernel stop postgres when the starting thread's process dies,
	// so a crashed test binary leaves no server behind. Not for buddi serve, whose server is
	// recovered on the next start instead.
	DieWithParent bool
}

// Cluster is one embedded PostgreSQL cluster. Start and Stop are safe to call from one
// goroutine at a time; Done and Pid from any.
type Cluster struct {
	opts  Options
	log   *slog.Logger
	runAs *account

	// testHook, when set, may stop a conversion at a named step (see secure).
	testHook func(step string) error
	// initArgs are more arguments for initdb (Upgrade's, to match the old cluster).
	initArgs []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// account is the unprivileged user postgres runs as when buddi is root.
type account struct {
	name     string
	uid, gid uint32
}

// New returns a cluster for opts; nothing runs until Start.
func New(opts Options) *Cluster {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Cluster{opts: opts, log: log.With("service", "pgcluster")}
}

// DataDir is PGDATA.
func (c *Cluster) DataDir() string { return filepath.Join(c.opts.Dir, "data") }

// SocketDir is the directory that holds the server's unix socket.
func (c *Cluster) SocketDir() string { return filepath.Join(c.opts.Dir, "run") }

// LogFile is where the server's own output goes: beside Dir, not in it, so under root the
// file sits in a directory the unprivileged account cannot write (it cannot swap it for a
// link that buddi would then write through).
func (c *Cluster) LogFile() string { return filepath.Clean(c.opts.Dir) + ".log" }

// Initialized reports whether initdb has already run.
func (c *Cluster) Initialized() bool {
	_, err := os.Stat(filepath.Join(c.DataDir(), "PG_VERSION"))
	return err == nil
}

// Done is closed when the server this Cluster started has exited; nil before Start.
func (c *Cluster) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done
}

// Pid is the server's process id, or 0 when this Cluster runs none.
func (c *Cluster) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil || c.cmd.Process == nil || c.exitedLocked() {
		return 0
	}
	return c.cmd.Process.Pid
}

func (c *Cluster) exitedLocked() bool {
	if c.done == nil {
		return true
	}
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Start brings the server up and returns once it accepts connections: it makes the roles'
// password files on first use, runs initdb on first use, stops a server left running by a
// killed buddi, clears a stale pid file, starts postgres, and makes sure every connection
// must give its role's password (converting a cluster an earlier buddi made with trust).
// Calling Start while this Cluster's server runs does nothing.
func (c *Cluster) Start(ctx context.Context) error {
	c.mu.Lock()
	running := !c.exitedLocked()
	c.mu.Unlock()
	if running {
		return nil
	}
	if err := c.prepare(); err != nil {
		return err
	}
	ownerPW, appPW, err := c.passwords()
	if err != nil {
		return err
	}
	if !c.Initialized() {
		c.log.Info("creating the database (first start, takes a few seconds)…", "dir", c.DataDir())
		if err := c.initdb(ctx, ownerPW); err != nil {
			return err
		}
	}
	if err := c.recover(ctx); err != nil {
		return err
	}
	if err := c.spawn(ctx, ownerPW); err != nil {
		return err
	}
	if err := c.secure(ctx, ownerPW, appPW); err != nil {
		// A server left running here might still trust its socket: stop it.
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = c.Stop(stopCtx)
		return err
	}
	return nil
}

// prepare makes the cluster's directories and, when buddi is root, hands them to the
// unprivileged account.
func (c *Cluster) prepare() error {
	if c.opts.Dir == "" {
		return errors.New("pgcluster: no directory given")
	}
	if c.opts.BinDir == "" {
		bin, err := FindBinariesFor("", c.opts.Dir)
		if err != nil {
			return err
		}
		c.opts.BinDir = bin
	}
	if sock := filepath.Join(c.SocketDir(), fmt.Sprintf(".s.PGSQL.%d", port)); len(sock) > maxSocketPath {
		return fmt.Errorf("the database socket path %s is longer than %d bytes: set BUDDI_HOME to a shorter path", sock, maxSocketPath)
	}
	if os.Geteuid() == 0 && c.runAs == nil {
		acct, err := unprivilegedAccount()
		if err != nil {
			return err
		}
		// The data directory may sit under a home only root can enter (/root/.buddi): the
		// account gets search access to exactly the directories on the way down.
		granted, err := grantSearch(c.opts.Dir, acct)
		if err != nil {
			return err
		}
		if len(granted) > 0 {
			c.log.Info("gave the database account search access on the way to its directory", "account", acct.name, "dirs", granted)
		}
		c.runAs = acct
	}
	if err := os.MkdirAll(c.opts.Dir, 0o700); err != nil {
		return fmt.Errorf("create database directory %s: %w", c.opts.Dir, err)
	}
	// Dir's entry is in buddi's own directory; what is inside Dir may be the server account's
	// doing, so the socket directory is made and changed through descriptors, never by a path
	// that could lead through a link.
	dir, err := c.openDir()
	if err != nil {
		return err
	}
	defer dir.Close()
	if err := c.ownDir(dir); err != nil {
		return err
	}
	if err := unix.Mkdirat(int(dir.Fd()), "run", 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("create database directory %s: %w", c.SocketDir(), err)
	}
	run, err := openSubdir(dir, "run")
	if err != nil {
		return err
	}
	defer run.Close()
	return c.ownDir(run)
}

func unprivilegedAccount() (*account, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("buddi runs as root, and PostgreSQL refuses to: create an unprivileged 'postgres' account (installing the postgresql package does) or set DATABASE_URL")
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil || uid == 0 {
		return nil, fmt.Errorf("the postgres account (uid %s) cannot be used to run the database: set DATABASE_URL", u.Uid)
	}
	return &account{name: u.Username, uid: uint32(uid), gid: uint32(gid)}, nil
}

// serverUID is the account the server runs as.
func (c *Cluster) serverUID() uint32 {
	if c.runAs != nil {
		return c.runAs.uid
	}
	return uint32(os.Geteuid())
}

// command builds an exec.Cmd for a server binary with a clean environment, in its own process
// group (a Ctrl-C at the terminal reaches buddi, which then stops the server in order), and,
// under root, as the unprivileged account.
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.opts.BinDir, name), args...)
	cmd.Env = []string{"PATH=" + c.opts.BinDir + ":/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
	// "/" because the caller's directory may be one the unprivileged account cannot enter.
	cmd.Dir = "/"
	attr := &syscall.SysProcAttr{Setpgid: true}
	if c.runAs != nil {
		attr.Credential = &syscall.Credential{Uid: c.runAs.uid, Gid: c.runAs.gid}
	}
	if c.opts.DieWithParent {
		attr.Pdeathsig = syscall.SIGQUIT
	}
	cmd.SysProcAttr = attr
	return cmd
}

// initPwfile is the file initdb reads the owner's password from, inside Dir for the moment
// initdb runs. It holds the password's SCRAM verifier, not the password, so the server's
// account never sees the password itself.
const initPwfile = ".initdb-password"

// initdb makes the cluster with password authentication from the start: the owner's
// verifier set by initdb, then pg_hba.conf replaced by hbaConf.
func (c *Cluster) initdb(ctx context.Context, ownerPW string) error {
	c.log.Debug("initdb", "dir", c.DataDir())
	verifier, err := newScramVerifier(ownerPW)
	if err != nil {
		return err
	}
	dir, err := c.openDir()
	if err != nil {
		return err
	}
	defer dir.Close()
	if err := c.writeIn(dir, initPwfile, verifier+"\n"); err != nil {
		return err
	}
	defer unix.Unlinkat(int(dir.Fd()), initPwfile, 0)
	// Sorting is bytewise (C), the same on every machine; the character type is C.UTF-8, so
	// lower(), ILIKE and pg_trgm (memory's recall) know the letters of every alphabet.
	args := []string{"-D", c.DataDir(), "-U", Owner, "--auth=scram-sha-256", "--pwfile=" + filepath.Join(c.opts.Dir, initPwfile),
		"-E", "UTF8", "--locale=C", "--lc-ctype=C.UTF-8", "--no-instructions"}
	if c.opts.Fast {
		args = append(args, "--no-sync")
	}
	args = append(args, c.initArgs...)
	cmd := c.command("initdb", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := runCtx(ctx, cmd); err != nil {
		// A half-made cluster would fail every later start: remove it so the next try is clean.
		_ = os.RemoveAll(c.DataDir())
		return fmt.Errorf("initdb %s: %w: %s", c.DataDir(), err, lastLines(out.String(), 5))
	}
	return c.writeDataFile("pg_hba.conf", hbaConf)
}

func runCtx(ctx context.Context, cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		return err
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-waited
		return ctx.Err()
	}
}

// recover handles what a killed buddi leaves: a postgres of this cluster still running (it is
// stopped, to be started again as this process's child) or a pid file naming a dead process.
func (c *Cluster) recover(ctx context.Context) error {
	pidFile := filepath.Join(c.DataDir(), "postmaster.pid")
	pid, ok := readPid(pidFile)
	if !ok {
		return nil
	}
	if isServerOf(pid, c.DataDir()) {
		c.log.Warn("a postgres from an earlier run is still serving this cluster; restarting it", "pid", pid)
		if err := stopPid(ctx, pid); err != nil {
			return err
		}
	}
	// The postmaster is gone (or its pid now names an unrelated process, which is left
	// alone). Its backends may still hold its shared memory, and a new server refuses to
	// start until they let go.
	if err := awaitDetached(ctx, pidFile, c.serverUID()); err != nil {
		return err
	}
	return removeStale(pidFile, pid, c.log)
}

func removeStale(pidFile string, pid int, log *slog.Logger) error {
	if _, err := os.Stat(pidFile); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	log.Info("removing stale postgres pid file", "pid", pid)
	if err := os.Remove(pidFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove stale pid file %s: %w", pidFile, err)
	}
	return nil
}

func (c *Cluster) spawn(ctx context.Context, ownerPW string) error {
	logf, err := os.OpenFile(c.LogFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("open database log %s: %w", c.LogFile(), err)
	}
	args := []string{"-D", c.DataDir(), "-k", c.SocketDir(), "-p", strconv.Itoa(port),
		"-c", "listen_addresses=", "-c", "unix_socket_permissions=0700", "-c", "logging_collector=off"}
	if c.opts.Fast {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	cmd := c.command("postgres", args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start postgres from %s: %w", c.opts.BinDir, err)
	}
	done := make(chan struct{})
	c.mu.Lock()
	c.cmd, c.done, c.err = cmd, done, nil
	c.mu.Unlock()
	go func() {
		err := cmd.Wait()
		logf.Close()
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(done)
	}()
	// Every command that opens the database starts and stops postgres: not news for its owner.
	c.log.Debug("postgres started", "pid", cmd.Process.Pid, "socket", c.SocketDir())
	if err := c.awaitReady(ctx, done, ownerPW); err != nil {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Stop(stopCtx)
		return err
	}
	return nil
}

// awaitReady polls with a real connection until the server answers, the process exits, or
// ctx ends. A refused password is an answer too: secure says what to do about it.
func (c *Cluster) awaitReady(ctx context.Context, done <-chan struct{}, ownerPW string) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	cfg, err := pgconn.ParseConfig(fmt.Sprintf("host=%s port=%d user=%s dbname=postgres sslmode=disable", c.SocketDir(), port, Owner))
	if err != nil {
		return err
	}
	cfg.Password = ownerPW
	for {
		attempt, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := pgconn.ConnectConfig(attempt, cfg)
		cancel()
		if err == nil {
			_ = conn.Close(ctx)
			return nil
		}
		if isAuthFailure(err) {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("postgres exited while starting: %s (see %s)", c.logTail(), c.LogFile())
		case <-ctx.Done():
			return fmt.Errorf("postgres did not accept connections in time: %w (see %s)", ctx.Err(), c.LogFile())
		case <-tick.C:
		}
	}
}

func (c *Cluster) logTail() string {
	b, err := os.ReadFile(c.LogFile())
	if err != nil {
		return "no log"
	}
	return lastLines(string(b), 3)
}

// Stop shuts the server down: a fast shutdown first, then an immediate one, then a kill, each
// step when the one before has not finished by ctx's deadline (or 10 s without one).
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	cmd, done := c.cmd, c.done
	c.mu.Unlock()
	if cmd == nil || done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	pid := cmd.Process.Pid
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	_ = syscall.Kill(pid, syscall.SIGINT)
	select {
	case <-done:
		c.log.Debug("postgres stopped", "pid", pid)
		return nil
	case <-ctx.Done():
	}
	c.log.Warn("postgres did not stop in time; stopping it immediately", "pid", pid)
	_ = syscall.Kill(pid, syscall.SIGQUIT)
	select {
	case <-done:
		return nil
	case <-time.After(5 * time.Second):
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-done
	return fmt.Errorf("postgres (pid %d) had to be killed", pid)
}

// ExitErr is how the server exited, once Done is closed.
func (c *Cluster) ExitErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
