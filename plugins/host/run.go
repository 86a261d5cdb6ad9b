package host

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// MaxStream is how much of each of stdout and stderr a result keeps: the last bytes.
const MaxStream = 64 << 10

// command is one program to run in a process group of its own.
type command struct {
	path    string   // the absolute program
	args    []string // its argument vector, argv[0] included
	dir     string   // the absolute working directory
	env     []string // the whole environment
	timeout time.Duration
	grace   time.Duration // between SIGTERM and SIGKILL
}

// stream is what was kept of one output stream.
type stream struct {
	text    string // the last MaxStream bytes at most, cut at a character boundary
	dropped int64  // how many bytes before them were dropped
}

// ran is how a command ended.
type ran struct {
	stdout, stderr stream
	exitCode       int // -1 when killed by a signal
	signal         syscall.Signal
	timedOut       bool
	cancelled      bool
	held           bool // a process outside the group kept an output pipe open
	elapsed        time.Duration
}

// run starts c in a session and process group of its own, with stdin from /dev/null and
// SIGKILL as its parent-death signal, and waits for it. On the timeout or when ctx is done
// the group gets SIGTERM, then SIGKILL after the grace. When the program has exited, what it
// left in its group is killed while the program is still an unreaped zombie, so the group id
// cannot belong to anybody else. An error means nothing was started.
func run(ctx context.Context, c command) (ran, error) {
	if err := ctx.Err(); err != nil {
		return ran{}, fmt.Errorf("host.exec: not started: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return ran{}, fmt.Errorf("host.exec: output pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		_ = outR.Close()
		_ = outW.Close()
		return ran{}, fmt.Errorf("host.exec: output pipe: %w", err)
	}
	cmd := &exec.Cmd{
		Path: c.path, Args: c.args, Dir: c.dir, Env: append([]string{}, c.env...),
		Stdout: outW, Stderr: errW,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	}
	// The parent-death signal is tied to the thread that forks; keep it until the reap.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	started := time.Now()
	err = cmd.Start()
	_ = outW.Close()
	_ = errW.Close()
	if err != nil {
		_ = outR.Close()
		_ = errR.Close()
		return ran{}, fmt.Errorf("host.exec: start %s: %w", c.path, err)
	}
	pid := cmd.Process.Pid
	var r ran

	stdout, stderr := &tail{}, &tail{}
	var copying sync.WaitGroup
	for _, p := range []struct {
		dst *tail
		src *os.File
	}{{stdout, outR}, {stderr, errR}} {
		copying.Go(func() { _, _ = io.Copy(p.dst, p.src) })
	}
	copied := make(chan struct{})
	go func() { copying.Wait(); close(copied) }()

	var exitedAt time.Time
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		var info unix.Siginfo
		for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
		}
		exitedAt = time.Now()
	}()

	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	select {
	case <-exited:
	case <-ctx.Done():
		r.cancelled = true
	case <-timer.C:
		r.timedOut = true
	}
	if r.cancelled || r.timedOut {
		_ = unix.Kill(-pid, unix.SIGTERM)
		t := time.NewTimer(c.grace)
		select {
		case <-exited:
		case <-t.C:
		}
		t.Stop()
	}
	// Whatever is left of the group, the program included, ends now; the program is not
	// reaped yet, so -pid is still its group.
	_ = unix.Kill(-pid, unix.SIGKILL)
	<-exited

	select {
	case <-copied:
	case <-time.After(c.grace):
		r.held = true // a process that left the group holds a pipe: stop reading
		_ = outR.Close()
		_ = errR.Close()
		<-copied
	}
	_ = outR.Close()
	_ = errR.Close()
	werr := cmd.Wait()
	r.elapsed = exitedAt.Sub(started)
	r.stdout, r.stderr = stdout.result(), stderr.result()
	r.exitCode = -1
	if st := cmd.ProcessState; st != nil {
		r.exitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signal = ws.Signal()
		}
	} else if werr != nil {
		return r, fmt.Errorf("host.exec: wait for %s: %w", c.path, werr)
	}
	return r, nil
}

// tail keeps the last MaxStream bytes written to it and counts the rest.
type tail struct {
	mu      sync.Mutex
	buf     []byte
	dropped int64
}

// Write keeps p's end; it never fails.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - MaxStream; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// result is what was kept, starting at a character boundary (a cut rune's bytes are
// counted as dropped).
func (t *tail) result() stream {
	t.mu.Lock()
	defer t.mu.Unlock()
	b, dropped := t.buf, t.dropped
	if dropped > 0 {
		for n := 0; n < utf8.UTFMax-1 && len(b) > 0 && !utf8.RuneStart(b[0]); n++ {
			dropped++
			b = b[1:]
		}
	}
	return stream{text: string(b), dropped: dropped}
}
