package mcp_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"buddi/internal/proctest"
	"buddi/plugins/mcp"
)

// orphanChildEnv makes the test binary play a buddi that connects to a stdio plugin, prints
// the server's pid and waits to be killed.
const orphanChildEnv = "BUDDI_MCP_ORPHAN_CHILD"

func init() {
	if os.Getenv(orphanChildEnv) == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := mcp.Connect(ctx, mcp.Plugin{Name: "testy", Command: []string{os.Getenv(orphanChildEnv)}, Env: []string{"TEST_LINGER=1"}}, mcp.ConnectOptions{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(s.Pid())
	select {} // until killed
}

// TestAStdioServerDiesWithBuddi: buddi killed without closing its session (SIGKILL) does
// not leave the plugin's server running unowned, even a server that runs on after its
// stdin closes.
func TestAStdioServerDiesWithBuddi(t *testing.T) {
	child := exec.Command(os.Args[0], "-test.run", "^$")
	child.Env = append(os.Environ(), orphanChildEnv+"="+server)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the child said nothing (%v)", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		t.Fatalf("the child said %q, want the server's pid", line)
	}
	if !alive(pid) {
		t.Fatalf("the server (pid %d) is not running while its session is open", pid)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	exited, err := proctest.WaitExit(pid, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !exited {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the server (pid %d) still runs 20 s after buddi was killed", pid)
	}
}

// alive reports whether pid is a process that has not exited (a zombie has).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}
