package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// init turns this process into a launcher when it was started as one (its environment holds
// launchEnv): it applies the box and execs the program, and never returns. Every binary that
// links this package — buddi, and each test binary that imports spawn — can so be its own
// launcher, with nothing else to install. In any other process it does nothing.
func init() {
	if v, ok := os.LookupEnv(launchEnv); ok {
		runLauncher(v)
	}
}

// runLauncher applies the box l describes to this thread and execs the program on it. Every
// failure ends the process with ExitLaunchFailed and one line on the status descriptor:
// nothing is ever exec'd outside the box.
func runLauncher(encoded string) {
	// Landlock, no_new_privs and the capability sets belong to a thread, and execve takes the
	// calling thread's: restrict and exec on one.
	runtime.LockOSThread()
	status := 2
	if len(os.Args) > 1 {
		if fd, err := strconv.Atoi(os.Args[1]); err == nil && fd > 2 {
			status = fd
			unix.CloseOnExec(fd)
		}
	}
	// The status descriptor is the last one the caller passed: anything above it came from
	// somewhere else (a descriptor buddi leaked without close-on-exec) and is not passed on.
	if err := unix.CloseRange(uint(max(status, 2)+1), ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		_, _ = unix.Write(status, []byte("sandbox: internal: mark descriptors close-on-exec: "+err.Error()+"\n"))
		exitNow(ExitLaunchFailed)
	}
	fail := func(stage string, err error) {
		msg := strings.ReplaceAll(err.Error(), "\n", " ")
		_, _ = unix.Write(status, []byte("sandbox: "+stage+": "+msg+"\n"))
		exitNow(ExitLaunchFailed)
	}
	defer func() {
		if r := recover(); r != nil {
			fail("internal", fmt.Errorf("launcher panic: %v", r))
		}
	}()
	l, err := decodeLaunch(encoded)
	if err != nil {
		fail("policy", err)
	}
	forced := func(stage string) {
		if l.FailAt == stage {
			fail(stage, errors.New("failure forced by a test"))
		}
	}
	forced("policy")
	if err := l.Policy.Validate(); err != nil {
		fail("policy", err)
	}
	b, err := prepare(l)
	if err != nil {
		fail("paths", err)
	}
	defer b.close()
	forced("paths")
	if err := b.mount(); err != nil {
		fail("mounts", err)
	}
	forced("mounts")
	if err := unix.Chdir(b.dir); err != nil {
		fail("paths", fmt.Errorf("enter %s: %w", b.dir, err))
	}
	rules, err := b.ruleset()
	if err != nil {
		fail("landlock", err)
	}
	forced("landlock")
	if err := dropPrivileges(); err != nil {
		fail("privileges", err)
	}
	forced("privileges")
	if err := restrictSelf(rules); err != nil {
		fail("landlock", err)
	}
	_ = unix.Close(rules)
	forced("exec")
	if l.Probe {
		exitNow(0)
	}
	err = unix.Exec(b.program, l.Argv, l.Env)
	fail("exec", fmt.Errorf("%s: %w", b.program, err))
}

// exitNow ends the process at once, with no exit hooks (a race-enabled binary would
// otherwise wait a second).
func exitNow(code int) {
	for {
		_, _, _ = unix.RawSyscall(unix.SYS_EXIT_GROUP, uintptr(code), 0, 0)
	}
}
