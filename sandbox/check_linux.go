package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// Check reports whether a box can be made on this machine, and if not, an *UnavailableError
// saying why in one sentence. It asks the kernel for Landlock's ABI, then starts one launcher
// that applies a box to two empty temporary directories and exits instead of exec'ing, so
// that whatever stands in the way (no user namespaces for this account, a container that
// forbids mounts, an LSM that refuses) is found the way a command would find it. The answer
// is computed once per process.
func Check() error { return checked() }

// checked is Check's answer, worked out on the first call.
var checked = sync.OnceValue(probe)

// probe is Check's work.
func probe() error {
	abi, err := landlockABI()
	if err != nil {
		return &UnavailableError{Reason: err.Error()}
	}
	if abi < minABI {
		return &UnavailableError{Reason: fmt.Sprintf("the kernel's Landlock is ABI %d and the box needs %d (Linux 6.12 or later)", abi, minABI)}
	}
	root, err := os.MkdirTemp("", "buddi-sandbox-probe-")
	if err != nil {
		return &UnavailableError{Reason: fmt.Sprintf("no temporary directory to try a box in: %v", err)}
	}
	defer os.RemoveAll(root)
	ws, home := root+"/workspace", root+"/home"
	for _, d := range []string{ws, home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return &UnavailableError{Reason: fmt.Sprintf("no temporary directory to try a box in: %v", err)}
		}
	}
	err = runProbe(launch{Policy: Policy{Home: home, Workspace: ws}, Dir: ws, Probe: true})
	if err == nil {
		return nil
	}
	return &UnavailableError{Reason: explain(err)}
}

// runProbe starts a launcher for l and waits for it.
func runProbe(l launch) error {
	cmd := &exec.Cmd{}
	if err := startLaunch(cmd, l); err != nil {
		return err
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("the trial launcher failed: %w", err)
	}
	return nil
}

// explain turns a failed trial into the sentence Check gives.
func explain(err error) string {
	var le *LaunchError
	msg := err.Error()
	switch {
	case errors.As(err, &le) && le.Stage == "mounts":
		return "a trial box could not make its mounts (" + le.Reason + "): this account needs a mount namespace of its own"
	case errors.As(err, &le):
		return "a trial box failed at " + le.Stage + " (" + le.Reason + ")"
	case (strings.Contains(msg, "operation not permitted") || strings.Contains(msg, "permission denied")) && os.Geteuid() == 0:
		return "a trial box could not get a mount namespace (" + msg + "): this process may not make one (a container without CAP_SYS_ADMIN, or a process already inside a box)"
	case strings.Contains(msg, "operation not permitted") || strings.Contains(msg, "permission denied"):
		return "a trial box could not get a mount namespace (" + msg + "): user namespaces are not allowed to this account here, or this process is already inside a box"
	}
	return "a trial box could not be started (" + msg + ")"
}
