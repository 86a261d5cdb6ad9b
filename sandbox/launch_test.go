//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// needBox skips a test on a machine where Check says no box can be made, naming why.
func needBox(t *testing.T) {
	t.Helper()
	if err := Check(); err != nil {
		t.Skipf("no box on this machine, so nothing to test: %v", err)
	}
}

// tree is a data directory and a workspace in a temporary directory.
type tree struct{ root, home, ws string }

func newTree(t *testing.T) tree {
	t.Helper()
	root := t.TempDir()
	tr := tree{root: root, home: root + "/home", ws: root + "/ws"}
	for _, d := range []string{tr.home, tr.ws} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

// shell runs sh -c script in the box, in dir, and returns its output and exit code.
func shell(t *testing.T, p Policy, dir, script string) (string, int, error) {
	t.Helper()
	return runIn(t, p, dir, []string{"/bin/sh", "-c", script}, []string{"PATH=/usr/bin:/bin"}, "")
}

// runIn runs argv in the box through Start (failAt set: through a launch that fails there).
func runIn(t *testing.T, p Policy, dir string, argv, env []string, failAt string) (string, int, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := &exec.Cmd{Path: argv[0], Args: argv, Env: env, Dir: dir, Stdout: w, Stderr: w}
	if failAt == "" {
		err = Start(cmd, p)
	} else {
		err = startLaunch(cmd, launch{Policy: p, Path: argv[0], Argv: argv, Env: env, Dir: dir, FailAt: failAt})
	}
	_ = w.Close()
	if err != nil {
		return "", -1, err
	}
	out, _ := io.ReadAll(r)
	_ = cmd.Wait()
	return string(out), cmd.ProcessState.ExitCode(), nil
}

// TestBoxBasics: a boxed shell runs in the workspace with exactly the environment it was
// given, writes there and in its private /tmp, and finds neither the data directory nor
// buddi's environment.
func TestBoxBasics(t *testing.T) {
	t.Parallel()
	needBox(t)
	tr := newTree(t)
	if err := os.WriteFile(tr.home+"/vault.json", []byte("sealed"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "CI=1"}
	out, code, err := runIn(t, Policy{Home: tr.home, Workspace: tr.ws}, tr.ws, []string{"/usr/bin/env"}, env, "")
	if err != nil || code != 0 {
		t.Fatalf("env: %v, exit %d, %s", err, code, out)
	}
	if got := strings.Split(strings.TrimSpace(out), "\n"); !slices.Equal(got, env) {
		t.Errorf("the program saw the environment %q, want %q", got, env)
	}
	out, code, err = shell(t, Policy{Home: tr.home, Workspace: tr.ws}, tr.ws,
		`pwd; echo a > made && echo wrote-ws; echo b > /tmp/t && cat /tmp/t; cat `+tr.home+`/vault.json || echo no-vault`)
	if err != nil || code != 0 {
		t.Fatalf("sh: %v, exit %d, %s", err, code, out)
	}
	want := tr.ws + "\nwrote-ws\nb\n"
	if !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "no-vault\n") {
		t.Errorf("got\n%s\nwant it to start %q and end no-vault", out, want)
	}
	if b, err := os.ReadFile(tr.ws + "/made"); err != nil || string(b) != "a\n" {
		t.Errorf("the workspace file: %q, %v", b, err)
	}
}

// TestLaunchFailsClosed: every stage of the launcher that fails keeps the program from
// running at all, and Start says which stage.
func TestLaunchFailsClosed(t *testing.T) {
	t.Parallel()
	needBox(t)
	for _, stage := range []string{"policy", "paths", "mounts", "landlock", "privileges", "exec"} {
		t.Run("forced at "+stage, func(t *testing.T) {
			t.Parallel()
			tr := newTree(t)
			_, _, err := runIn(t, Policy{Home: tr.home, Workspace: tr.ws}, tr.ws,
				[]string{"/bin/sh", "-c", "echo ran > ran"}, nil, stage)
			var le *LaunchError
			if !errors.As(err, &le) || le.Stage != stage || !strings.Contains(err.Error(), "was not run") {
				t.Fatalf("got %v, want a LaunchError at %s", err, stage)
			}
			if _, err := os.Stat(tr.ws + "/ran"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the program ran: %v", err)
			}
		})
	}
	t.Run("a workspace that does not exist", func(t *testing.T) {
		t.Parallel()
		tr := newTree(t)
		gone := tr.root + "/gone"
		_, _, err := runIn(t, Policy{Home: tr.home, Workspace: gone}, gone, []string{"/bin/true"}, nil, "")
		var le *LaunchError
		if !errors.As(err, &le) || le.Stage != "paths" || !strings.Contains(le.Reason, "does not exist") {
			t.Fatalf("got %v, want a LaunchError at paths saying the workspace does not exist", err)
		}
	})
	t.Run("a workspace that leads into the data directory", func(t *testing.T) {
		t.Parallel()
		tr := newTree(t)
		link := tr.root + "/link"
		if err := os.Symlink(tr.home, link); err != nil {
			t.Fatal(err)
		}
		_, _, err := runIn(t, Policy{Home: tr.home, Workspace: link}, link, []string{"/bin/true"}, nil, "")
		var le *LaunchError
		if !errors.As(err, &le) || le.Stage != "paths" || !strings.Contains(le.Reason, "inside buddi's data directory") {
			t.Fatalf("got %v, want a LaunchError at paths refusing the data directory", err)
		}
	})
	t.Run("a cache that leads into the data directory", func(t *testing.T) {
		t.Parallel()
		tr := newTree(t)
		if err := os.Mkdir(tr.home+"/npm", 0o700); err != nil {
			t.Fatal(err)
		}
		link := tr.root + "/npm"
		if err := os.Symlink(tr.home+"/npm", link); err != nil {
			t.Fatal(err)
		}
		_, _, err := runIn(t, Policy{Home: tr.home, Workspace: tr.ws, Writable: []string{link}}, tr.ws, []string{"/bin/true"}, nil, "")
		var le *LaunchError
		if !errors.As(err, &le) || le.Stage != "paths" || !strings.Contains(le.Reason, "inside buddi's data directory") {
			t.Fatalf("got %v, want a LaunchError at paths refusing the data directory", err)
		}
	})
	t.Run("a program the box hides", func(t *testing.T) {
		t.Parallel()
		tr := newTree(t)
		prog := filepath.Join(tr.home, "tool")
		if err := os.WriteFile(prog, []byte("#!/bin/sh\necho ran\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		_, _, err := runIn(t, Policy{Home: tr.home, Workspace: tr.ws}, tr.ws, []string{prog}, nil, "")
		var le *LaunchError
		if !errors.As(err, &le) || le.Stage != "paths" || !strings.Contains(le.Reason, "inside buddi's data directory") {
			t.Fatalf("got %v, want a LaunchError at paths refusing a program in the data directory", err)
		}
	})
	t.Run("refused before a launcher starts", func(t *testing.T) {
		t.Parallel()
		tr := newTree(t)
		for _, c := range []struct {
			p   Policy
			dir string
		}{
			{Policy{Home: tr.home, Workspace: tr.ws, Writable: []string{tr.home + "/cache"}}, tr.ws},
			{Policy{Home: tr.home, Workspace: tr.ws}, tr.root},
			{Policy{Workspace: tr.ws}, tr.ws},
		} {
			cmd := &exec.Cmd{Path: "/bin/true", Dir: c.dir}
			if err := Start(cmd, c.p); err == nil || cmd.Process != nil {
				t.Errorf("Start(%+v in %s) = %v, started %v: want a refusal", c.p, c.dir, err, cmd.Process != nil)
			}
		}
	})
}

// TestLeakedDescriptorIsNotPassed: a descriptor buddi holds without close-on-exec (here the
// vault, opened so) does not reach the boxed program. Not parallel: the leaked descriptor
// must not reach other tests' children.
func TestLeakedDescriptorIsNotPassed(t *testing.T) {
	needBox(t)
	tr := newTree(t)
	if err := os.WriteFile(tr.home+"/vault.json", []byte("sealed"), 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(tr.home+"/vault.json", unix.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	out, code, err := shell(t, Policy{Home: tr.home, Workspace: tr.ws}, tr.ws, fmt.Sprintf("cat <&%d || echo refused", fd))
	if err != nil || code != 0 || strings.Contains(out, "sealed") || !strings.Contains(out, "refused") {
		t.Errorf("reading the leaked descriptor %d: %v, exit %d, %q", fd, err, code, out)
	}
}

// TestStartWhereNoBoxCanBeMade: on a machine where Check says no, Start returns that error
// and starts nothing at all. Not parallel: it stands in for Check's answer.
func TestStartWhereNoBoxCanBeMade(t *testing.T) {
	saved := checked
	t.Cleanup(func() { checked = saved })
	checked = func() error { return &UnavailableError{Reason: "the kernel's Landlock is ABI 4 and the box needs 6"} }
	tr := newTree(t)
	cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", "echo ran > ran"}, Dir: tr.ws}
	err := Start(cmd, Policy{Home: tr.home, Workspace: tr.ws})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "ABI 4") || cmd.Process != nil {
		t.Fatalf("got %v (started: %v), want ErrUnavailable and nothing started", err, cmd.Process != nil)
	}
	if _, err := os.Stat(tr.ws + "/ran"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the program ran: %v", err)
	}
}

// TestExplain: the sentences Check gives for a trial that failed.
func TestExplain(t *testing.T) {
	t.Parallel()
	refused := "user namespaces are not allowed" // to an account that is not root
	if os.Geteuid() == 0 {
		refused = "a container without CAP_SYS_ADMIN, or a process already inside a box"
	}
	tests := []struct {
		err  error
		want string
	}{
		{&LaunchError{Stage: "mounts", Reason: "make the mounts private: operation not permitted"}, "needs a mount namespace of its own"},
		{&LaunchError{Stage: "landlock", Reason: "restrict this thread: operation not permitted"}, "failed at landlock"},
		{errors.New("sandbox: start the launcher: fork/exec /proc/self/exe: operation not permitted"), refused},
		{errors.New("sandbox: start the launcher: fork/exec /proc/self/exe: no such file or directory"), "could not be started"},
	}
	for _, tt := range tests {
		if got := explain(tt.err); !strings.Contains(got, tt.want) {
			t.Errorf("explain(%v) = %q, want it to say %q", tt.err, got, tt.want)
		}
	}
}

// TestBoxHasItsOwnProcesses: the program is the first process of a PID namespace of its
// own, and the box's /proc shows that namespace alone: not buddi, not the owner's shells,
// not other boxes, not even by their command lines.
func TestBoxHasItsOwnProcesses(t *testing.T) {
	t.Parallel()
	needBox(t)
	tr := newTree(t)
	me := os.Getpid()
	out, code, err := shell(t, Policy{Home: tr.home, Workspace: tr.ws}, tr.ws,
		fmt.Sprintf(`echo pid $$; ls /proc | grep -c '^[0-9]'; cat /proc/%d/cmdline && echo saw-buddi || echo no-buddi`, me))
	if err != nil || code != 0 {
		t.Fatalf("sh: %v, exit %d, %s", err, code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 || lines[0] != "pid 1" || lines[len(lines)-1] != "no-buddi" {
		t.Fatalf("got %q, want the shell as pid 1 and no buddi", out)
	}
	if n, err := strconv.Atoi(lines[1]); err != nil || n > 3 {
		t.Errorf("the box's /proc lists %s processes, want the box's own (at most 3)", lines[1])
	}
}

// TestNamespacesRefusedToRoot: a box that lets its program make namespaces (a writable
// /proc) is refused to root, whose uid 0 in the box could write the kernel's settings there.
func TestNamespacesRefusedToRoot(t *testing.T) {
	t.Parallel()
	needBox(t)
	if os.Geteuid() != 0 {
		t.Skip("not root")
	}
	tr := newTree(t)
	_, _, err := shell(t, Policy{Home: tr.home, Workspace: tr.ws, Namespaces: true}, tr.ws, "echo ran > ran")
	var le *LaunchError
	if !errors.As(err, &le) || le.Stage != "mounts" || !strings.Contains(le.Reason, "refused to root") {
		t.Fatalf("got %v, want a refusal at mounts", err)
	}
	if _, err := os.Stat(tr.ws + "/ran"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the program ran: %v", err)
	}
}
