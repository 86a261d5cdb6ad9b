package preview_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"buddi/internal/pgtest"
	"buddi/surfaces/preview"
)

// childEnv makes the test binary a process that listens (serveAsChild) instead of running
// the tests.
const childEnv = "BUDDI_PREVIEW_TEST_CHILD"

// childPage is what the listening child answers every request with.
const childPage = "the process's own page"

// serveAsChild listens as mode says, prints the port, answers every request with childPage,
// and exits when its standard input closes. Modes: "v6only" ([::] with IPV6_V6ONLY set: it
// does not cover 127.0.0.1); "devserver" (a dev server as developer.start runs one: its
// standard input is /dev/null, so it runs until it is stopped); "letgo" (SIGUSR1 closes its
// server, listener and connections, and SIGUSR2 listens again on the same port, as a dev
// server restarting its server does).
func serveAsChild(mode string) int {
	var lc net.ListenConfig
	network, addr := "tcp", "127.0.0.1:0"
	switch mode {
	case "v6only":
		network, addr = "tcp6", "[::]:0"
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, 1)
			}); err != nil {
				return err
			}
			return serr
		}
	}
	l, err := lc.Listen(context.Background(), network, addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(l.Addr().(*net.TCPAddr).Port)
	if mode != "devserver" {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			os.Exit(0)
		}()
	}
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, childPage)
	})
	if mode == "letgo" {
		addr := l.Addr().String()
		srv := &http.Server{Handler: page}
		go func() { _ = srv.Serve(l) }()
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
		for sig := range sigs {
			if sig == syscall.SIGUSR1 {
				_ = srv.Close()
				continue
			}
			l, err := net.Listen("tcp", addr)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			srv = &http.Server{Handler: page}
			go func() { _ = srv.Serve(l) }()
		}
	}
	_ = http.Serve(l, page)
	return 0
}

// startChild starts the test binary as a process that listens as mode says, and returns its
// pid and port; it ends with the test.
func startChild(t *testing.T, mode string) (pid, port int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the child did not say its port: %v", err)
	}
	if port, err = strconv.Atoi(strings.TrimSpace(line)); err != nil {
		t.Fatalf("the child's port: %q", line)
	}
	return cmd.Process.Pid, port
}

// A process listening on [::]:PORT with IPV6_V6ONLY does not own 127.0.0.1:PORT: another
// server (here the test's own, standing in for any other local service) can hold that. The
// preview reaches the process's own socket, never the other one, on the preview listener and
// at the root of an origin of its own.
func TestIPv6OnlySocketIsReachedAtItsOwnAddress(t *testing.T) {
	pid, port := startChild(t, "v6only")
	other, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("127.0.0.1:%d beside the child's v6-only socket: %v", port, err)
	}
	someoneElse := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "someone else's service")
	}))
	someoneElse.Listener.Close()
	someoneElse.Listener = other
	someoneElse.Start()
	t.Cleanup(someoneElse.Close)

	f := newFixture(t)
	f.targets["v6"] = preview.Target{Port: port, Pid: pid}
	cookie := f.open(t, "v6")
	if code, body := get(t, f.prev.URL+"/preview/developer/v6/", cookie); code != http.StatusOK || body != childPage {
		t.Fatalf("through the preview listener: %d %q, want the child's page", code, body)
	}
	root := httptest.NewServer(f.srv.Root("developer", "v6", port))
	t.Cleanup(root.Close)
	if code, body := get(t, root.URL+"/"); code != http.StatusOK || body != childPage {
		t.Fatalf("at the root: %d %q, want the child's page", code, body)
	}
}

// The proof that the process holds the socket is made for every connection the proxy opens
// to it. A process that lets its port go (its server closed, the process still running) is
// not followed to whoever takes the port next: that server gets no request, and the preview
// answers 502. When the process listens on the port again (a new socket), the preview finds
// it at once.
func TestPortLetGoIsNotFollowedToAnotherServer(t *testing.T) {
	pid, port := startChild(t, "letgo")
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	f := newFixture(t)
	f.targets["web"] = preview.Target{Port: port, Pid: pid}
	cookie := f.open(t, "web")
	page := f.prev.URL + "/preview/developer/web/"
	if code, body := get(t, page, cookie); code != http.StatusOK || body != childPage {
		t.Fatalf("before: %d %q, want the child's page", code, body)
	}

	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	pgtest.Eventually(t, "the child let its port go", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	other, err := net.Listen("tcp4", addr)
	if err != nil {
		t.Fatalf("take %s after the child: %v", addr, err)
	}
	var reached atomic.Int32
	someoneElse := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		fmt.Fprint(w, "someone else's service")
	}))
	someoneElse.Listener.Close()
	someoneElse.Listener = other
	someoneElse.Start()
	for range 3 {
		if code, body := get(t, page, cookie); code != http.StatusBadGateway || body == "someone else's service" {
			t.Fatalf("after the port changed hands: %d %q, want 502", code, body)
		}
	}
	root := httptest.NewServer(f.srv.Root("developer", "web", port))
	t.Cleanup(root.Close)
	if code, _ := get(t, root.URL+"/"); code != http.StatusBadGateway {
		t.Fatalf("at the root after the port changed hands: %d, want 502", code)
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the server that took the port got %d requests", n)
	}
	someoneElse.Close()

	if err := syscall.Kill(pid, syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	pgtest.Eventually(t, "the child listens again", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	if code, body := get(t, page, cookie); code != http.StatusOK || body != childPage {
		t.Fatalf("after the child listened again: %d %q, want its page", code, body)
	}
}
