package spawn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"buddi/plugins/developer/runlist"
	"buddi/sandbox"
)

// ErrNoCommand is a Spec with no words to run.
var ErrNoCommand = errors.New("spawn: no command to run")

// ErrNoBox is a Spec with neither a sandbox policy (Box) nor an explicit Unboxed: a command
// never runs outside the box by omission.
var ErrNoBox = errors.New("spawn: the command has no sandbox policy: give it a Box, or set Unboxed for a run the owner approved as unboxed")

// Spec is one command to spawn: an argument vector, the directory it runs in and its whole
// environment. Nothing in it comes from buddi's own process.
type Spec struct {
	// Argv is the program and its arguments, as runlist.Split gives them. Argv[0] is a bare
	// name, resolved on the PATH in Env (see Resolve); the program receives it as its argv[0].
	Argv []string
	// Dir is the absolute directory the command runs in (the workspace, or a cwd resolved
	// inside it). Required.
	Dir string
	// Env is the command's whole environment, as Env builds it. Nil is an empty environment,
	// never buddi's own.
	Env []string
	// Timeout bounds a Run; zero means no bound other than the context. Start ignores it.
	Timeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL when the command's group is stopped.
	// Zero means DefaultGrace.
	Grace time.Duration
	// Box is the sandbox the command runs in (see package sandbox): its Workspace must hold
	// Dir. A Spec needs a Box unless Unboxed is set; with neither, nothing is spawned
	// (ErrNoBox).
	Box *sandbox.Policy
	// Unboxed runs the command with all of the owner's rights, outside any box. Only for a
	// command the owner approved knowing that (the card says so); never a fallback when a
	// box cannot be made.
	Unboxed bool
}

// SpecFor builds the Spec for a command string as developer.run and developer.start
// receive it: split into words by runlist.Split (no shell: quotes group, nothing expands),
// to run in dir with env. A command that cannot be split or has no words is an error.
func SpecFor(command, dir string, env []string) (Spec, error) {
	argv, err := runlist.Split(command)
	if err != nil {
		return Spec{}, fmt.Errorf("spawn: split %q: %w", command, err)
	}
	if len(argv) == 0 {
		return Spec{}, ErrNoCommand
	}
	return Spec{Argv: argv, Dir: dir, Env: env}, nil
}

// grace returns the Spec's grace, or DefaultGrace.
func (s Spec) grace() time.Duration {
	if s.Grace > 0 {
		return s.Grace
	}
	return DefaultGrace
}

// command resolves the program and builds the exec.Cmd: its own session and group, the
// Spec's environment and nothing else, stdin from /dev/null. It refuses a Spec that says
// neither how it is boxed nor that it is not.
func (s Spec) command() (*exec.Cmd, error) {
	if len(s.Argv) == 0 {
		return nil, ErrNoCommand
	}
	switch {
	case s.Box == nil && !s.Unboxed:
		return nil, ErrNoBox
	case s.Box != nil && s.Unboxed:
		return nil, fmt.Errorf("spawn: %q: the Spec has a Box and is also Unboxed: set one of them", s.Argv[0])
	}
	if !filepath.IsAbs(s.Dir) {
		return nil, fmt.Errorf("spawn: %q: directory %q is not absolute", s.Argv[0], s.Dir)
	}
	if fi, err := os.Stat(s.Dir); err != nil {
		return nil, fmt.Errorf("spawn: %q: directory: %w", s.Argv[0], err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("spawn: %q: %s is not a directory", s.Argv[0], s.Dir)
	}
	path, err := Resolve(s.Argv[0], lookup(s.Env, "PATH"))
	if err != nil {
		return nil, err
	}
	env := s.Env
	if env == nil {
		env = []string{} // exec.Cmd reads a nil Env as "inherit buddi's"
	}
	return &exec.Cmd{
		Path: path,
		Args: append([]string(nil), s.Argv...),
		Dir:  s.Dir,
		Env:  append([]string(nil), env...),
		// Pdeathsig: should buddi die without stopping it (a crash, SIGKILL), the command gets
		// SIGKILL, and with a boxed command's first process its whole box ends. The kernel
		// sends it when the thread that forked the command ends, so Run and Start fork on a
		// thread locked to a goroutine that lives until the command has been reaped.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	}, nil
}

// start starts cmd, in the Spec's box when it has one. The box's launcher has exec'd the
// program by the time it returns, so cmd's pid is the program's; a box that could not be
// applied is an error (a *sandbox.LaunchError or sandbox.ErrUnavailable, wrapped) and
// nothing ran. A boxed command's Launched must be finished once it has ended; an unboxed
// one has none (nil).
func (s Spec) start(cmd *exec.Cmd) (*sandbox.Launched, error) {
	path := cmd.Path
	var launched *sandbox.Launched
	var err error
	if s.Box != nil {
		launched, err = sandbox.Launch(cmd, *s.Box)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		return nil, fmt.Errorf("spawn: start %s: %w", path, err)
	}
	return launched, nil
}

// finishBox ends a boxed command's hold on its workspace (see sandbox.Launched.Finish) and
// returns what it quarantined there; nothing for an unboxed command.
func finishBox(l *sandbox.Launched) sandbox.Report {
	if l == nil {
		return sandbox.Report{}
	}
	return l.Finish()
}

// Ending says how a Run ended.
type Ending uint8

// How a Run ended.
const (
	// Exited: the command ended by itself (its exit code, or a signal it did not get from us).
	Exited Ending = iota
	// TimedOut: Spec.Timeout passed and the group was stopped.
	TimedOut
	// Cancelled: the context was done and the group was stopped.
	Cancelled
)

// String returns "exited", "timed out" or "cancelled".
func (e Ending) String() string {
	switch e {
	case TimedOut:
		return "timed out"
	case Cancelled:
		return "cancelled"
	}
	return "exited"
}

// Result is what a Run gives back.
type Result struct {
	// Path is the absolute file that was spawned.
	Path string
	// Argv is the argument vector it was given.
	Argv []string
	// Pid was the command's pid, and so the id of its process group.
	Pid int
	// Output is both streams as they were written, interleaved, keeping the last MaxOutput
	// bytes.
	Output string
	// Dropped is how many bytes of output were dropped from the front to keep the tail.
	Dropped int64
	// ExitCode is the command's exit status, or -1 when a signal ended it.
	ExitCode int
	// Signal is the signal that ended the command, or 0.
	Signal syscall.Signal
	// Elapsed is the time from the spawn to the command's exit.
	Elapsed time.Duration
	// Ended says whether the command exited, or was stopped by a timeout or a cancel.
	Ended Ending
	// OutputHeld is true when, after the command and its group had ended, a process that
	// had left the group still held the output open; the output was cut off after the grace
	// and that process was not stopped. A boxed command leaves no such process: its box ends
	// with it.
	OutputHeld bool
	// Quarantine says what the boxed command left in its workspace that git outside the box
	// would obey (a .git entry, a bare repository, a hooks directory that was missing) and
	// that was moved aside once it had ended; see sandbox.Launched.Finish.
	Quarantine sandbox.Report
}

// Run spawns spec.Argv (no shell) in its own session and process group, in spec.Dir, with
// spec.Env and stdin from /dev/null, inside spec.Box (or unboxed when spec.Unboxed says
// so), and waits for it. The output of both streams together
// is kept up to its last MaxOutput bytes. When the command exits, whatever it left in its
// group is killed. When ctx is done or spec.Timeout passes first, the group gets SIGTERM,
// then SIGKILL after spec.Grace, and Result.Ended says which. Run returns an error only when
// nothing was spawned (no box, an unresolved program, a bad directory, a context already
// done, a box that could not be applied); a
// command that fails is a Result with its exit code. Nothing started is left running and no
// goroutine outlives the call.
func Run(ctx context.Context, spec Spec) (Result, error) {
	cmd, err := spec.command()
	if err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("spawn: run %q: %w", spec.Argv[0], err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("spawn: run %q: output pipe: %w", spec.Argv[0], err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw // one pipe: the streams interleave as written
	path, argv := cmd.Path, cmd.Args
	// The command's parent-death signal is tied to this thread (see command).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	started := time.Now()
	launched, err := spec.start(cmd)
	_ = pw.Close()
	if err != nil {
		_ = pr.Close()
		return Result{}, err
	}
	pid := cmd.Process.Pid
	res := Result{Path: path, Argv: argv, Pid: pid}

	out := newTail(MaxOutput)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, pr)
	}()
	var exitedAt time.Time
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		waitExited(pid)
		exitedAt = time.Now()
	}()

	var timeout <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-exited:
	case <-ctx.Done():
		res.Ended = Cancelled
	case <-timeout:
		res.Ended = TimedOut
	}
	grace := spec.grace()
	if res.Ended != Exited {
		terminate(pid, exited, grace)
	}
	// The command has exited and is not reaped yet, so its group id is still its own:
	// anything it left running there is killed now.
	signalOwn(pid, syscall.SIGKILL)

	select {
	case <-copied:
	default:
		t := time.NewTimer(grace)
		select {
		case <-copied:
		case <-t.C:
			res.OutputHeld = true
			_ = pr.Close() // unblocks the copy
			<-copied
		}
		t.Stop()
	}
	_ = pr.Close()
	// The command has exited, and with it its box: what it left is looked at now.
	res.Quarantine = finishBox(launched)

	werr := cmd.Wait()
	res.Elapsed = exitedAt.Sub(started)
	res.Output, res.Dropped = out.result()
	res.ExitCode = -1
	if st := cmd.ProcessState; st != nil {
		res.ExitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal()
		}
	} else if werr != nil {
		return res, fmt.Errorf("spawn: wait %s: %w", path, werr)
	}
	return res, nil
}
