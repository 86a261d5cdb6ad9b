package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"buddi/surfaces/webauth"
)

// squat listens on addr as whatever account runs it, says "listening", and then prints
// every Authorization header it is sent, answering 401: another local account holding
// buddi's port while buddi is down.
func squat(addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	fmt.Println("listening")
	_ = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			fmt.Println("got:", a)
		}
		w.WriteHeader(http.StatusUnauthorized)
	}))
}

// Another account that takes buddi's port while buddi is down collects no token: the command
// line looks at who holds the port before it sends one, and says so.
func TestPortSquatterGetsNoToken(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("switching to another account needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv is not installed")
	}
	t.Parallel()
	home, port, vars := env(t)
	mkdir(t, home)
	token, err := webauth.CLIToken(home)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/tmp", "buddi-squat-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	self, _ := os.Executable()
	bin := dir + "/squatter"
	if out, err := exec.Command("cp", self, bin).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	os.Chmod(dir, 0o755)
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-test.run=^$")
	cmd.Env = []string{"BUDDI_TEST_SQUAT=127.0.0.1:" + strconv.Itoa(port)}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "listening" {
		t.Fatalf("the squatter: %q", lines.Text())
	}
	got := make(chan string, 16)
	go func() {
		for lines.Scan() {
			got <- lines.Text()
		}
		close(got)
	}()
	for _, args := range [][]string{{"doctor"}, {"ask", "hi"}, {"chat"}} {
		code, stdout, stderr := runBuddi(t, vars, time.Minute, args...)
		if !strings.Contains(stdout+stderr, "held by another account (uid 65534)") {
			t.Errorf("buddi %s does not say who holds the port (exit %d):\n%s%s", args[0], code, stdout, stderr)
		}
	}
	cmd.Process.Kill()
	for line := range got {
		if strings.Contains(line, token) {
			t.Fatalf("the squatter collected the command line's token: %s", line)
		}
		if strings.HasPrefix(line, "got:") {
			t.Errorf("the squatter was sent a credential: %s", line)
		}
	}
}
