package proctest

import (
	"os/exec"
	"testing"
	"time"
)

// TestWaitExit: a running process is waited for until it ends, a wait that ends first says
// it has not, and a process already gone has exited.
func TestWaitExit(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if exited, err := WaitExit(pid, 50*time.Millisecond); err != nil || exited {
		t.Fatalf("WaitExit of a running process = %v, %v; want not exited", exited, err)
	}
	_ = cmd.Process.Kill()
	if exited, err := WaitExit(pid, 10*time.Second); err != nil || !exited {
		t.Fatalf("WaitExit of a killed process = %v, %v; want exited", exited, err)
	}
	_ = cmd.Wait()
	if exited, err := WaitExit(pid, time.Second); err != nil || !exited {
		t.Fatalf("WaitExit of a reaped process = %v, %v; want exited", exited, err)
	}
}
