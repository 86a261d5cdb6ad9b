package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"buddi/internal/pgtest"
)

var treePaths = []string{
	"root", "root/postgres", "root/queue", "root/agents", "root/surfaces", "root/surfaces/dashboard", "root/surfaces/preview",
	"root/conversations", "root/workspaces", "root/sentinels", "root/sentinels/developer.failing-tests", "root/sources", "root/sources/email.inbox", "root/plugins",
}

func TestServeFirstStartHealthDoctorAndCleanStop(t *testing.T) {
	t.Parallel()
	home, port, vars := env(t)
	s := startServe(t, home, port, vars)
	rep := s.health()

	// A second serve of the same home is refused by the lock, and leaves the running one's
	// command-line token as it was.
	token, _ := os.ReadFile(filepath.Join(home, "cli.token"))
	other := append(append([]string(nil), vars...), "BUDDI_WEB_PORT="+strconv.Itoa(freeTestPort(t)))
	if code, _, errOut := runBuddi(t, other, time.Minute, "serve"); code == 0 || !strings.Contains(errOut, "already using") {
		t.Errorf("a second serve: exit %d\n%s", code, errOut)
	}
	if again, _ := os.ReadFile(filepath.Join(home, "cli.token")); string(again) != string(token) || len(token) == 0 {
		t.Error("a refused second serve changed the running one's token")
	}
	if _, err := s.fetchHealth(); err != nil {
		t.Errorf("the command line's token after a refused second serve: %v", err)
	}

	if rep.Version == "" || rep.Pid != s.cmd.Process.Pid {
		t.Errorf("version %q pid %d; want a version and pid %d", rep.Version, rep.Pid, s.cmd.Process.Pid)
	}
	if rep.Database.Source != "embedded" || !rep.Database.Reachable || !strings.HasPrefix(rep.Database.Version, "1") {
		t.Errorf("database = %+v, want embedded, reachable, with a version", rep.Database)
	}
	if !rep.Queue.Running || len(rep.Queue.Queues) == 0 || rep.Queue.Queues[0].Name != "default" {
		t.Errorf("queue = %+v, want running with the default queue", rep.Queue)
	}
	if rep.Listener != "127.0.0.1:"+strconv.Itoa(port) {
		t.Errorf("listener = %q", rep.Listener)
	}
	got := map[string]bool{}
	for _, a := range rep.Actors {
		got[a.Path] = true
		if a.State != "running" || a.Restarts != 0 {
			t.Errorf("actor %+v: want running with no restarts", a)
		}
		if a.Supervisor && !strings.Contains(a.Strategy, "restarts in") {
			t.Errorf("supervisor %s states no budget: %q", a.Path, a.Strategy)
		}
	}
	for _, p := range treePaths {
		if !got[p] {
			t.Errorf("actor %s missing from health", p)
		}
	}
	// 0700; as root the postgres account also gets a search-only ACL entry on it, which the
	// group bits show as the ACL mask (--x): nobody else gains anything.
	if fi, err := os.Stat(home); err != nil || (fi.Mode().Perm() != 0o700 && !(os.Geteuid() == 0 && fi.Mode().Perm() == 0o710)) {
		t.Errorf("data directory mode = %v, %v; want 0700", fi.Mode().Perm(), err)
	}

	// Serving, but with no vault key and no model account: doctor says so (exit 1).
	code, out, errOut := runBuddi(t, vars, time.Minute, "doctor", "--json")
	if code != 1 {
		t.Errorf("doctor exit %d while serving with a locked vault and no account; want 1\n%s\n%s", code, out, errOut)
	}
	var doc struct {
		Healthy bool `json:"healthy"`
		Serving *struct {
			Actors []struct{ Path string } `json:"actors"`
		} `json:"serving"`
		Migrations []struct {
			Schema          string
			Current, Target int64
		} `json:"migrations"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	if doc.Healthy || doc.Serving == nil || len(doc.Serving.Actors) != len(treePaths) || len(doc.Migrations) < 2 {
		t.Errorf("doctor report = %s", out)
	}

	// The database's socket lets no one in without the role's password, and buddi itself works
	// as a role that cannot get past the event log's triggers.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, user := range []string{"buddi", "buddi_app", "postgres"} {
		for _, pw := range []string{"", "wrong"} {
			cfg, err := pgx.ParseConfig("host=" + filepath.Join(home, "pg", "run") + " user=" + user + " dbname=buddi sslmode=disable")
			if err != nil {
				t.Fatal(err)
			}
			cfg.Password = pw
			conn, err := pgx.ConnectConfig(ctx, cfg)
			var pgErr *pgconn.PgError
			if err == nil {
				conn.Close(ctx)
				t.Errorf("%s with password %q: let in", user, pw)
			} else if !errors.As(err, &pgErr) || (pgErr.Code != "28P01" && pgErr.Code != "28000") {
				t.Errorf("%s with password %q: %v, want an authentication error", user, pw, err)
			}
		}
	}
	app := dbConn(t, home)
	if _, err := app.Exec(ctx, "DELETE FROM core.events"); err == nil {
		t.Error("the application role deleted the event log")
	}

	pgPid, ok := postmasterPid(home)
	if !ok || !processAlive(pgPid) {
		t.Fatalf("no live postgres for %s", home)
	}
	app.Close(ctx)
	if code := s.stop(); code != 0 {
		t.Errorf("exit code after SIGTERM = %d, want 0\n%s", code, s.log.String())
	}
	if processAlive(pgPid) {
		t.Errorf("postgres pid %d still alive after buddi stopped", pgPid)
	}
	if left := processesUnder(home); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

func TestServeRecoversAfterKill9(t *testing.T) {
	t.Parallel()
	home, port, vars := env(t)
	first := startServe(t, home, port, vars)
	first.health()
	orphan, ok := postmasterPid(home)
	if !ok {
		t.Fatal("no postmaster.pid")
	}
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-first.exited
	if !processAlive(orphan) {
		t.Fatalf("the killed buddi's postgres (pid %d) is gone already; the test needs it left running", orphan)
	}

	second := startServe(t, home, port, vars)
	rep := second.health()
	if !rep.Database.Reachable {
		t.Errorf("database not reachable after recovery: %+v", rep.Database)
	}
	if processAlive(orphan) {
		t.Errorf("the earlier postgres (pid %d) was neither adopted nor replaced", orphan)
	}
	if code := second.stopWith(syscall.SIGINT); code != 0 {
		t.Errorf("exit code after SIGINT = %d, want 0", code)
	}
	if left := processesUnder(home); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// Killing the database server makes its actor fail; the supervisor restarts it, records the
// decision in core.events, and health counts the restart.
func TestServeRestartsPostgresAndRecordsTheDecision(t *testing.T) {
	t.Parallel()
	home, port, vars := env(t)
	s := startServe(t, home, port, vars)
	s.health()
	// Health answers before the start is done; the database is killed once buddi serves.
	waitFor(t, "buddi serving", 60*time.Second, func() bool { return strings.Contains(s.log.String(), "buddi is ready at") })
	pid, _ := postmasterPid(home)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var restarts int
	waitFor(t, "a new postgres and the actor's restart in /api/health", 60*time.Second, func() bool {
		if newPid, ok := postmasterPid(home); !ok || newPid == pid || !processAlive(newPid) {
			return false
		}
		rep, err := s.fetchHealth()
		if err != nil || rep.Status != "ok" {
			return false
		}
		for _, a := range rep.Actors {
			if a.Path == "root/postgres" {
				restarts = a.Restarts
			}
		}
		return restarts >= 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, appDSN(t, home))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	waitFor(t, "supervisor.restarted event", 30*time.Second, func() bool {
		err := conn.QueryRow(ctx, `SELECT count(*) FROM core.events WHERE kind = 'supervisor.restarted' AND payload->>'child' = 'root/postgres'`).Scan(&n)
		return err == nil && n >= 1
	})
	if code := s.stop(); code != 0 {
		t.Errorf("exit code = %d, want 0", code)
	}
}

func TestServeWithDatabaseURL(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	home, port, vars := env(t, "DATABASE_URL="+dsn)
	s := startServe(t, home, port, vars)
	rep := s.health()
	if rep.Database.Source != "url" || !rep.Database.Reachable {
		t.Errorf("database = %+v, want url and reachable", rep.Database)
	}
	for _, a := range rep.Actors {
		if a.Path == "root/postgres" {
			t.Errorf("root/postgres runs although DATABASE_URL is set")
		}
	}
	if _, err := os.Stat(filepath.Join(home, "pg")); err == nil {
		t.Errorf("an embedded cluster was created although DATABASE_URL is set")
	}
	if code := s.stop(); code != 0 {
		t.Errorf("exit code = %d, want 0", code)
	}
}

func TestServeRefusesBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		setup    func(t *testing.T, home string, port int) []string // extra env
		wantCode int
		want     []string
		forbid   []string
	}{
		{
			name: "database URL refuses",
			setup: func(t *testing.T, _ string, _ int) []string {
				return []string{"DATABASE_URL=postgres://ann:s3cret@127.0.0.1:" + strconv.Itoa(freeTestPort(t)) + "/buddi"}
			},
			wantCode: 1, want: []string{"127.0.0.1:", "xxxxx"}, forbid: []string{"s3cret"},
		},
		{
			name: "database URL never answers",
			setup: func(t *testing.T, _ string, _ int) []string {
				l := listenerOn(t, 0)
				go func() {
					var held []net.Conn
					defer func() {
						for _, c := range held {
							c.Close()
						}
					}()
					for {
						c, err := l.Accept()
						if err != nil {
							return
						}
						held = append(held, c)
					}
				}()
				return []string{"DATABASE_URL=postgres://ann:s3cret@" + l.Addr().String() + "/buddi"}
			},
			wantCode: 1, want: []string{"no answer", "xxxxx"}, forbid: []string{"s3cret"},
		},
		{
			name: "port in use",
			setup: func(t *testing.T, _ string, port int) []string {
				listenerOn(t, port)
				return nil
			},
			wantCode: 1, want: []string{"port", "BUDDI_WEB_PORT", "in use"},
		},
		{
			name: "data directory not writable",
			setup: func(t *testing.T, home string, _ int) []string {
				file := filepath.Join(t.TempDir(), "file")
				if err := os.WriteFile(file, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				return []string{"BUDDI_HOME=" + filepath.Join(file, "home")}
			},
			wantCode: 1, want: []string{"file/home", "BUDDI_HOME"},
		},
		{
			name: "no postgres binaries",
			setup: func(t *testing.T, _ string, _ int) []string {
				return []string{"BUDDI_PG_BINDIR=" + t.TempDir()}
			},
			wantCode: 3, want: []string{"install PostgreSQL", "DATABASE_URL"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home, port, vars := env(t)
			vars = append(vars, tt.setup(t, home, port)...)
			if strings.Contains(tt.name, "port") {
				tt.want = append(tt.want, strconv.Itoa(port))
			}
			code, _, errOut := runBuddi(t, vars, 10*time.Second, "serve")
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, errOut)
			}
			last := lastLine(errOut)
			for _, w := range tt.want {
				if !strings.Contains(last, w) {
					t.Errorf("error %q does not mention %q", last, w)
				}
			}
			for _, f := range tt.forbid {
				if strings.Contains(errOut, f) {
					t.Errorf("output reveals %q:\n%s", f, errOut)
				}
			}
			if pid, ok := postmasterPid(home); ok && processAlive(pid) {
				t.Errorf("a postgres (pid %d) was left running", pid)
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func TestUnknownFlagIsUsageError(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	code := run([]string{"serve", "--no-such-flag"}, &out, &errb)
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if !strings.Contains(errb.String(), "unknown flag --no-such-flag") || !strings.Contains(errb.String(), "Usage:") || out.Len() != 0 {
		t.Errorf("stderr %q, stdout %q: want kong's usage error, all of it on stderr", errb.String(), out.String())
	}
}

func TestDoctorBeforeSetUp(t *testing.T) {
	t.Parallel()
	_, _, vars := env(t)
	code, out, _ := runBuddi(t, vars, time.Minute, "doctor")
	if code != 3 {
		t.Errorf("doctor on a fresh machine: exit %d, want 3\n%s", code, out)
	}
	if !strings.Contains(out, "buddi serve") {
		t.Errorf("doctor does not say what to do: %s", out)
	}
}

func TestDBMigrateIsIdempotentAndStatusReports(t *testing.T) {
	t.Parallel()
	home, _, vars := env(t)
	code, out, errOut := runBuddi(t, vars, 2*time.Minute, "db", "status")
	if code != 3 {
		t.Errorf("db status before set-up: exit %d, want 3\n%s%s", code, out, errOut)
	}
	code, out, errOut = runBuddi(t, vars, 2*time.Minute, "db", "migrate")
	if code != 0 || !strings.Contains(out, "applied core 1") || !strings.Contains(out, "applied river") {
		t.Fatalf("first migrate: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runBuddi(t, vars, 2*time.Minute, "db", "migrate")
	if code != 0 || !strings.Contains(out, "nothing to apply") {
		t.Errorf("second migrate: exit %d\n%s", code, out)
	}
	code, out, _ = runBuddi(t, vars, 2*time.Minute, "db", "status", "--json")
	var st struct {
		Database string `json:"database"`
		Current  bool   `json:"current"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || !st.Current || st.Database != "embedded" {
		t.Errorf("db status --json: exit %d\n%s", code, out)
	}
	if left := processesUnder(home); len(left) > 0 {
		t.Errorf("a command left processes behind: %v", left)
	}
}

// Closing the terminal buddi serve runs in (SIGHUP) stops it as SIGTERM does: cleanly, and
// its PostgreSQL with it.
func TestServeStopsOnHangup(t *testing.T) {
	t.Parallel()
	home, port, vars := env(t)
	s := startServe(t, home, port, vars)
	s.health()
	pgPid, ok := postmasterPid(home)
	if !ok || !processAlive(pgPid) {
		t.Fatalf("no live postgres for %s", home)
	}
	if code := s.stopWith(syscall.SIGHUP); code != 0 {
		t.Errorf("exit code after SIGHUP = %d, want 0\n%s", code, s.log.String())
	}
	if processAlive(pgPid) {
		t.Errorf("postgres pid %d still alive after buddi stopped on SIGHUP", pgPid)
	}
}
