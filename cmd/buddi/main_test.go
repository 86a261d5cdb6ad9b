package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/surfaces/webauth"
)

// binary is buddi built once for the tests that run it as a process.
var binary string

func TestMain(m *testing.M) {
	if addr := os.Getenv("BUDDI_TEST_SQUAT"); addr != "" {
		squat(addr) // this binary, run as another account by TestPortSquatterGetsNoToken
		return
	}
	dir, err := os.MkdirTemp("", "buddi-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "buddi")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build buddi:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := pgtest.Run(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is a clean environment for one buddi: its own home and port, no DATABASE_URL.
func env(t testing.TB, extra ...string) (home string, port int, vars []string) {
	t.Helper()
	home = filepath.Join(t.TempDir(), "home")
	port = freeTestPort(t)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "BUDDI_") || k == "DATABASE_URL" || k == "XDG_CONFIG_HOME" {
			continue
		}
		vars = append(vars, kv)
	}
	// The vault key is never the machine's own: no keychain, and a config directory of the
	// test's (a key file another test made there is not this one's).
	vars = append(vars, "BUDDI_HOME="+home, "BUDDI_WEB_PORT="+strconv.Itoa(port),
		"XDG_CONFIG_HOME="+filepath.Join(filepath.Dir(home), "config"), "BUDDI_KEYCHAIN=off")
	return home, port, append(vars, extra...)
}

// freeTestPort returns a port on 127.0.0.1 that was free a moment ago, for a test's server.
//
// The port is drawn below the kernel's ephemeral range (32768 and up here and on Debian), and
// it and the next one (a serve's preview listener) were free: a port handed back after a bind
// to :0 goes back to the ephemeral pool, where another test's connection or listener could
// take it before the test's own server binds it.
func freeTestPort(t testing.TB) int {
	t.Helper()
	for range 200 {
		p := 20000 + rand.IntN(12000)
		if portFree(p) && portFree(p+1) {
			return p
		}
	}
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// portFree reports whether 127.0.0.1:p can be bound now.
func portFree(p int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// runBuddi runs the binary to completion with a hang guard.
func runBuddi(t testing.TB, vars []string, limit time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = vars
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("buddi %v did not finish within %v; stderr:\n%s", args, limit, errb.String())
	}
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run buddi %v: %v", args, err)
	}
	return code, out.String(), errb.String()
}

// served is a running buddi serve.
type served struct {
	t      testing.TB
	cmd    *exec.Cmd
	home   string
	port   int
	vars   []string
	log    *lockedBuffer
	exited chan error
}

// lockedBuffer is the serve process's output, read while it is written.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startServe(t *testing.T, home string, port int, vars []string) *served {
	t.Helper()
	return startServeArgs(t, home, port, vars, "serve")
}

// startServeArgs starts buddi with args (serve and its flags).
func startServeArgs(t testing.TB, home string, port int, vars []string, args ...string) *served {
	t.Helper()
	s := &served{t: t, home: home, port: port, vars: vars, log: &lockedBuffer{}, exited: make(chan error, 1)}
	s.cmd = exec.Command(binary, args...)
	s.cmd.Env = vars
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exited <- s.cmd.Wait() }()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-s.exited:
			case <-time.After(30 * time.Second):
				_ = s.cmd.Process.Kill()
			}
		}
		if pid, ok := postmasterPid(home); ok && processAlive(pid) {
			_ = syscall.Kill(pid, syscall.SIGQUIT)
		}
		if t.Failed() {
			t.Logf("buddi serve output:\n%s", s.log.String())
		}
	})
	return s
}

// health polls /api/health until it reports ok or the deadline passes.
func (s *served) health() health.Report {
	s.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		select {
		case err := <-s.exited:
			s.exited <- err
			s.t.Fatalf("buddi serve exited (%v) before it was healthy:\n%s", err, s.log.String())
		default:
		}
		rep, err := s.fetchHealth()
		if err == nil && rep.Status == "ok" {
			return rep
		}
		last = fmt.Sprint(err, rep.Problems)
		time.Sleep(20 * time.Millisecond) // polling interval, not a wait for a signal
	}
	s.t.Fatalf("buddi serve not healthy in time (last: %s):\n%s", last, s.log.String())
	return health.Report{}
}

func (s *served) fetchHealth() (health.Report, error) {
	var rep health.Report
	resp, err := s.get("/api/health")
	if err != nil {
		return rep, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable { // 503: degraded, the report is the body
		return rep, fmt.Errorf("status %d", resp.StatusCode)
	}
	err = json.NewDecoder(resp.Body).Decode(&rep)
	if err == nil && (resp.StatusCode == http.StatusOK) != (rep.Status == "ok") {
		err = fmt.Errorf("status %d for a report that says %q", resp.StatusCode, rep.Status)
	}
	return rep, err
}

// request is a request to the served dashboard as the command line makes it: with the token
// buddi serve keeps in its home.
func (s *served) request(method, path string, body io.Reader) (*http.Response, error) {
	token, err := webauth.ReadCLIToken(s.home)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d%s", s.port, path), body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return http.DefaultClient.Do(req)
}

// signedIn returns a browser-like client (a cookie jar) signed in to the served dashboard
// through a link from `buddi dashboard`, as the owner's browser is.
func (s *served) signedIn(t testing.TB) *http.Client {
	t.Helper()
	var link struct{ URL string }
	if code, out, errOut := runBuddi(t, s.vars, time.Minute, "dashboard", "--json"); code != 0 || json.Unmarshal([]byte(out), &link) != nil {
		t.Fatalf("buddi dashboard: %d %s%s", code, out, errOut)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Timeout: 10 * time.Second, Jar: jar}
	resp, err := c.Get(link.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("sign in with %s: %s", link.URL, resp.Status)
	}
	return c
}

// get is request with GET.
func (s *served) get(path string) (*http.Response, error) { return s.request("GET", path, nil) }

// stop sends SIGTERM and returns the exit code.
func (s *served) stop() int {
	s.t.Helper()
	return s.stopWith(syscall.SIGTERM)
}

// stopWith sends sig and returns the exit code.
func (s *served) stopWith(sig syscall.Signal) int {
	s.t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatal(err)
	}
	select {
	case err := <-s.exited:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			s.t.Fatal(err)
		}
		return 0
	case <-time.After(60 * time.Second):
		s.t.Fatalf("buddi serve did not stop within a minute of SIGTERM:\n%s", s.log.String())
		return -1
	}
}

func postmasterPid(home string) (int, bool) {
	raw, err := os.ReadFile(filepath.Join(home, "pg", "data", "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	return pid, err == nil
}

func processAlive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X')
}

// processesUnder lists live processes whose command line mentions dir.
func processesUnder(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmdline := strings.ReplaceAll(string(raw), "\x00", " ")
		if strings.Contains(cmdline, dir) && processAlive(pid) {
			out = append(out, fmt.Sprintf("%d: %s", pid, cmdline))
		}
	}
	return out
}

func waitFor(t testing.TB, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling interval
	}
}

func listenerOn(t *testing.T, port int) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}
