package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// selfExe is the launcher's program: this very binary, as the kernel has it open, so a
// binary replaced on disk since buddi started still launches as itself.
const selfExe = "/proc/self/exe"

// Launch starts cmd inside the box p describes, and returns once cmd's program has been
// exec'd inside it, or with the error that kept it from being run. It is used in place of
// cmd.Start; the caller calls the result's Finish once the command has ended.
//
// cmd is given as it would run unboxed: Path the absolute program, Args its argument vector,
// Env its whole environment (nil is an empty one, never buddi's), Dir an absolute directory
// inside p.Workspace, the standard streams and ExtraFiles as usual, and a SysProcAttr whose
// Setsid, Setpgid and Pdeathsig are kept. Launch rewrites cmd to run the launcher instead
// (this binary, re-executed with the launch in its environment) and adds the namespaces;
// cmd.Process, cmd.Wait and the exit status then behave as for any started command, and the
// pid is the program's own, the first process of the box's PID namespace.
//
// Before the launcher starts, the workspace is scanned for the places git would take for a
// repository (see Finish), and <workspace>/.git is made, empty, when there is none and the
// box does not write it.
//
// The errors: an *UnavailableError (errors.Is ErrUnavailable) when no box can be made on
// this machine (see Check), a validation error for p, an error from cmd.Start, or a
// *LaunchError when the launcher could not apply the box; in that last case the launcher
// has already been waited for and nothing ran.
func Launch(cmd *exec.Cmd, p Policy) (*Launched, error) {
	l, g, err := boxFor(cmd, p)
	if err != nil {
		return nil, err
	}
	if err := startLaunch(cmd, l); err != nil {
		g.release()
		_ = unix.Close(g.root)
		return nil, err
	}
	return &Launched{finish: g.finish}, nil
}

// boxFor checks cmd and p as Launch does, and makes the launch and the git guard.
func boxFor(cmd *exec.Cmd, p Policy) (launch, *gitGuard, error) {
	if err := Check(); err != nil {
		return launch{}, nil, err
	}
	if err := p.Validate(); err != nil {
		return launch{}, nil, err
	}
	if !filepath.IsAbs(cmd.Path) {
		return launch{}, nil, fmt.Errorf("sandbox: program %q is not an absolute path: resolve it first", cmd.Path)
	}
	if !filepath.IsAbs(cmd.Dir) {
		return launch{}, nil, fmt.Errorf("sandbox: the command's directory %q is not absolute: give the directory inside the workspace it runs in", cmd.Dir)
	}
	if !within(filepath.Clean(cmd.Dir), p.Workspace) {
		return launch{}, nil, fmt.Errorf("sandbox: the command's directory %s is not inside the workspace %s", cmd.Dir, p.Workspace)
	}
	argv := cmd.Args
	if len(argv) == 0 {
		argv = []string{cmd.Path}
	}
	env := cmd.Env
	if env == nil {
		env = []string{}
	}
	l := launch{Policy: p, Path: cmd.Path, Argv: argv, Env: env, Dir: filepath.Clean(cmd.Dir)}
	// The launcher checks the paths again on its own; they are checked here first, since the
	// git guard touches the workspace before the launcher starts.
	b, err := prepare(l)
	if err != nil {
		return launch{}, nil, &LaunchError{Stage: "paths", Reason: err.Error()}
	}
	b.close()
	g, err := guardGit(b.workspace, p)
	if err != nil {
		return launch{}, nil, err
	}
	if err := g.sizeOK(); err != nil {
		g.release()
		_ = unix.Close(g.root)
		return launch{}, nil, err
	}
	l.Git = g.before.entries
	return l, g, nil
}

// Prepared is a command rewritten by Prepare, to be started by its caller.
type Prepared struct {
	cmd  *exec.Cmd
	g    *gitGuard
	r, w *os.File
	done bool
}

// Prepare rewrites cmd, as Launch does, to run inside the box p describes once its caller
// starts it: for a caller that does not start the command itself (a library that hands it a
// hook on its exec.Cmd before it calls Start). If Prepare fails, cmd is left so that Start
// refuses it (its Err is set): nothing runs outside the box. After cmd.Start has returned,
// and once the command is known to run or to have failed, the caller calls Started.
func Prepare(cmd *exec.Cmd, p Policy) (*Prepared, error) {
	l, g, err := boxFor(cmd, p)
	if err == nil {
		var r, w *os.File
		if r, w, err = rewrite(cmd, l); err == nil {
			return &Prepared{cmd: cmd, g: g, r: r, w: w}, nil
		}
		g.release()
		_ = unix.Close(g.root)
	}
	cmd.Err = err
	return nil, err
}

// Started says whether the prepared command's program was exec'd in its box: the Launched to
// finish once it has ended, or why it never ran (a *LaunchError when the box could not be
// applied; the launcher has exited, and the caller still waits for it as for any command).
// It blocks until the launcher has exec'd the program or failed, so call it once the command
// has shown it runs, or after the caller has given up on it.
func (pr *Prepared) Started() (*Launched, error) {
	if pr.done {
		return nil, errors.New("sandbox: Started was called twice")
	}
	pr.done = true
	_ = pr.w.Close()
	defer pr.r.Close()
	fail := func(err error) (*Launched, error) {
		pr.g.release()
		_ = unix.Close(pr.g.root)
		return nil, err
	}
	if pr.cmd.Process == nil {
		return fail(errors.New("sandbox: the prepared command was never started"))
	}
	if err := readStatus(pr.r); err != nil {
		return fail(err)
	}
	return &Launched{finish: pr.g.finish}, nil
}

// Start is Launch for a caller that does not read the report: the box's end (Finish) runs
// by itself once the program has exited.
func Start(cmd *exec.Cmd, p Policy) error {
	l, err := Launch(cmd, p)
	if err != nil {
		return err
	}
	l.finishOnExit(cmd.Process.Pid)
	return nil
}

// startLaunch turns cmd into a launcher for l, starts it and reads its status descriptor:
// end of file without a word is the exec having happened (the descriptor is close-on-exec),
// a line is the launcher's failure, after which the launcher is waited for.
func startLaunch(cmd *exec.Cmd, l launch) error {
	r, w, err := rewrite(cmd, l)
	if err != nil {
		return err
	}
	err = cmd.Start()
	_ = w.Close()
	if err != nil {
		_ = r.Close()
		return fmt.Errorf("sandbox: start the launcher: %w", err)
	}
	err = readStatus(r)
	_ = r.Close()
	if err != nil {
		_ = cmd.Wait()
	}
	return err
}

// rewrite turns cmd into a launcher for l: this binary, with the launch as its environment
// and a status pipe after the caller's descriptors. It returns the pipe's ends; the caller
// closes the write end once cmd has started.
func rewrite(cmd *exec.Cmd, l launch) (r, w *os.File, err error) {
	r, w, err = os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: status pipe: %w", err)
	}
	l.Status = 3 + len(cmd.ExtraFiles)
	enc, err := l.encode()
	if err != nil {
		_ = r.Close()
		_ = w.Close()
		return nil, nil, err
	}
	cmd.Path = selfExe
	cmd.Args = []string{launcherName, strconv.Itoa(l.Status)}
	cmd.Env = []string{launchEnv + "=" + enc}
	cmd.Dir = "/"
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	cmd.SysProcAttr = namespaces(cmd.SysProcAttr)
	return r, w, nil
}

// readStatus reads a started launcher's status descriptor to its end: nothing is the exec
// having happened, a line the launcher's failure.
func readStatus(r *os.File) error {
	msg, err := io.ReadAll(io.LimitReader(r, 4096))
	if err != nil {
		return &LaunchError{Stage: "internal", Reason: "reading the launcher's status: " + err.Error()}
	}
	if len(msg) == 0 {
		return nil
	}
	return parseFailure(string(msg))
}

// namespaces returns attr (copied, or a new one) with a new mount namespace, a new IPC
// namespace (System V shared memory, semaphores and message queues, and POSIX message
// queues, of the owner's other programs are not there) and a new PID namespace, whose first
// process the program becomes (the launcher execs it in place): when it ends, the kernel
// kills everything else in the box, a process that left its group or session included; and
// for an
// account that is not root a user namespace mapping its own uid and gid to themselves, so
// that it may mount in it, with the launcher holding CAP_SYS_ADMIN and CAP_SETPCAP there.
func namespaces(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{}
	if attr != nil {
		c := *attr
		a = &c
	}
	a.Cloneflags |= syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWPID
	if uid := os.Geteuid(); uid != 0 {
		gid := os.Getegid()
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
		// The namespace's capabilities would be lost at the launcher's exec (its uid is not 0
		// in the namespace): the two it needs pass as ambient ones, and it drops them itself.
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
	}
	return a
}

// parseFailure reads a launcher's failure line, "sandbox: <stage>: <reason>".
func parseFailure(line string) *LaunchError {
	line = strings.TrimSpace(line)
	rest, ok := strings.CutPrefix(line, "sandbox: ")
	if !ok {
		return &LaunchError{Stage: "internal", Reason: line}
	}
	stage, reason, ok := strings.Cut(rest, ": ")
	if !ok {
		return &LaunchError{Stage: "internal", Reason: rest}
	}
	return &LaunchError{Stage: stage, Reason: reason}
}
