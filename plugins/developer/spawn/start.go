package spawn

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"buddi/sandbox"
)

// Process is a long-lived command started by Start: a dev server, a test watcher. It is
// reaped by a goroutine of its own; Done is closed once it has exited and been reaped.
type Process struct {
	id         Identity
	path       string
	logPath    string
	box        *sandbox.Launched // nil unboxed
	done       chan struct{}
	exit       Exit           // written before done is closed
	quarantine sandbox.Report // likewise
	// stopping is set by Stop before it signals: the group is then Stop's to finish, and
	// the reaper does not signal what is left of it a second time.
	stopping atomic.Bool
}

// Exit is how a started process ended.
type Exit struct {
	// Code is the exit status, or -1 when a signal ended the process.
	Code int
	// Signal is the signal that ended it, or 0.
	Signal syscall.Signal
}

// Identity returns the process's (pid, start time) identity, to be stored with its row.
func (p *Process) Identity() Identity { return p.id }

// Path returns the absolute file that was spawned.
func (p *Process) Path() string { return p.path }

// LogPath returns the file its output is appended to.
func (p *Process) LogPath() string { return p.logPath }

// Done is closed once the process has exited and been reaped, and what it left running in
// its group has been stopped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exit waits until the process has ended and been reaped, and returns how it ended.
func (p *Process) Exit() Exit {
	<-p.done
	return p.exit
}

// Quarantine waits until the process has ended and been reaped, and returns what it left
// in its workspace that git outside its box would obey, moved aside (see Result.Quarantine).
func (p *Process) Quarantine() sandbox.Report {
	<-p.done
	return p.quarantine
}

// Stop stops the process and its group as the package-level Stop does, and waits until it
// has been reaped. A process that had already ended is not an error.
func (p *Process) Stop(grace time.Duration) error {
	p.stopping.Store(true)
	err := Stop(p.id, grace)
	if err != nil && !errors.Is(err, ErrStale) {
		return err
	}
	<-p.done
	return nil
}

// Start spawns spec as a long-lived process, the same way Run does (spec.Argv[0] resolved on
// the PATH in spec.Env, no shell, its own session and group, stdin from /dev/null, inside
// spec.Box unless spec.Unboxed), with both
// streams appended to the file at logPath. The log is opened with
// O_APPEND|O_CREATE|O_NOFOLLOW and mode 0600, so a symbolic link at logPath is refused, and
// must be a regular file. spec.Timeout is ignored: the process runs until it exits or is
// stopped. When it exits by itself, what it left running in its group gets SIGTERM, then
// SIGKILL after spec.Grace.
func Start(spec Spec, logPath string) (*Process, error) {
	cmd, err := spec.command()
	if err != nil {
		return nil, err
	}
	log, err := openLog(logPath)
	if err != nil {
		return nil, fmt.Errorf("spawn: start %q: %w", spec.Argv[0], err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	started := make(chan startResult, 1)
	// The process's parent-death signal is tied to the thread that forks it (see command):
	// it is forked on a thread locked to the goroutine that reaps it, which lets go of the
	// thread only once the process has been reaped.
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		p, err := spec.launch(cmd, logPath)
		_ = log.Close()
		started <- startResult{p, err}
		if err == nil {
			p.reap(cmd, spec.grace())
		}
	}()
	r := <-started
	return r.p, r.err
}

// startResult is what Start's goroutine hands back.
type startResult struct {
	p   *Process
	err error
}

// launch starts cmd as spec says and reads the identity of its process.
func (s Spec) launch(cmd *exec.Cmd, logPath string) (*Process, error) {
	path := cmd.Path
	box, err := s.start(cmd)
	if err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	// Not reaped yet, so its stat is there and is its own, even if it has already exited.
	st, err := readStat(pid)
	if err != nil {
		signalOwn(pid, unix.SIGKILL)
		_ = cmd.Wait()
		finishBox(box)
		return nil, fmt.Errorf("spawn: start %s: read its start time: %w", path, err)
	}
	return &Process{
		id:      Identity{Pid: pid, StartTime: st.start, Boot: bootID()},
		path:    path,
		logPath: logPath,
		box:     box,
		done:    make(chan struct{}),
	}, nil
}

// reap waits for the process to exit, stops what it left in its group while its pid still
// holds the group id (unless Stop is already doing so: the group's members keep its id from
// being reused until they are gone), then reaps it.
func (p *Process) reap(cmd *exec.Cmd, grace time.Duration) {
	defer close(p.done)
	waitExited(p.id.Pid)
	if !p.stopping.Load() {
		finishGroup(p.id.Pid, grace)
	}
	p.quarantine = finishBox(p.box)
	_ = cmd.Wait()
	p.exit = Exit{Code: -1}
	if st := cmd.ProcessState; st != nil {
		p.exit.Code = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.exit.Signal = ws.Signal()
		}
	}
}

// openLog opens the log for appending: never through a symbolic link, never a FIFO or a
// device (O_NONBLOCK keeps a FIFO from blocking the open), mode 0600.
func openLog(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0o600)
	if err != nil {
		switch err {
		case unix.ELOOP:
			return nil, fmt.Errorf("open log %s: it is a symbolic link", path)
		case unix.ENXIO:
			return nil, fmt.Errorf("open log %s: not a regular file (a FIFO or socket)", path)
		}
		return nil, fmt.Errorf("open log %s: %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("open log %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("open log %s: not a regular file", path)
	}
	if st.Mode&0o7777 != 0o600 {
		if err := unix.Fchmod(fd, 0o600); err != nil {
			_ = unix.Close(fd)
			return nil, fmt.Errorf("open log %s: %w", path, err)
		}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("open log %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}
