package sandbox

import (
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
	if err := Check(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(cmd.Path) {
		return nil, fmt.Errorf("sandbox: program %q is not an absolute path: resolve it first", cmd.Path)
	}
	if !filepath.IsAbs(cmd.Dir) {
		return nil, fmt.Errorf("sandbox: the command's directory %q is not absolute: give the directory inside the workspace it runs in", cmd.Dir)
	}
	if !within(filepath.Clean(cmd.Dir), p.Workspace) {
		return nil, fmt.Errorf("sandbox: the command's directory %s is not inside the workspace %s", cmd.Dir, p.Workspace)
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
		return nil, &LaunchError{Stage: "paths", Reason: err.Error()}
	}
	b.close()
	g, err := guardGit(b.workspace, p)
	if err != nil {
		return nil, err
	}
	if err := g.sizeOK(); err != nil {
		g.release()
		_ = unix.Close(g.root)
		return nil, err
	}
	l.Git = g.before.entries
	if err := startLaunch(cmd, l); err != nil {
		g.release()
		_ = unix.Close(g.root)
		return nil, err
	}
	return &Launched{finish: g.finish}, nil
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
// a line is the launcher's failure.
func startLaunch(cmd *exec.Cmd, l launch) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("sandbox: status pipe: %w", err)
	}
	l.Status = 3 + len(cmd.ExtraFiles)
	enc, err := l.encode()
	if err != nil {
		_ = r.Close()
		_ = w.Close()
		return err
	}
	cmd.Path = selfExe
	cmd.Args = []string{launcherName, strconv.Itoa(l.Status)}
	cmd.Env = []string{launchEnv + "=" + enc}
	cmd.Dir = "/"
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	cmd.SysProcAttr = namespaces(cmd.SysProcAttr)
	err = cmd.Start()
	_ = w.Close()
	if err != nil {
		_ = r.Close()
		return fmt.Errorf("sandbox: start the launcher: %w", err)
	}
	msg, rerr := io.ReadAll(io.LimitReader(r, 4096))
	_ = r.Close()
	if rerr == nil && len(msg) == 0 {
		return nil
	}
	_ = cmd.Wait()
	if rerr != nil {
		return &LaunchError{Stage: "internal", Reason: "reading the launcher's status: " + rerr.Error()}
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
