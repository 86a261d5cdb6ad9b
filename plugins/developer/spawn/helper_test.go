package spawn

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"buddi/sandbox"
)

// helperMain is the spawned program of these tests. Its first argument is what to do:
//
//	env                 print the environment, one entry a line, sorted
//	argv                print each argument on a line
//	cwd                 print the working directory
//	exit CODE TEXT      print TEXT to stdout and "err:TEXT" to stderr, exit CODE
//	flood N             N times: "out %06d\n" to stdout, then "err %06d\n" to stderr
//	block [FIFO]        write its pid to FIFO, then wait for a signal forever
//	term-ok FIFO        likewise, and on SIGTERM print "got SIGTERM" and exit 0
//	stubborn FIFO       ignore SIGTERM, start a child in its group that ignores it too,
//	                    write "PID CHILDPID" to FIFO, wait forever
//	sleeper TOKEN       wait for a signal forever (TOKEN marks it, see markedPids)
//	leave TOKEN         start a sleeper child in its group, print "child PID", exit 0
//	escape TOKEN        start a sleeper child in a session of its own, print "child PID", exit 0
//	daemon TOKEN        double fork: a child in a session of its own starts a sleeper and
//	                    exits at once, leaving it an orphan; then exit 0
//	escape-stay TOKEN FIFO  start a sleeper in a session of its own, write its own pid to
//	                    FIFO, wait forever
//	boxer TOKEN FIFO WS HOME  as buddi would: Start a boxed sleeper in workspace WS with data
//	                    directory HOME, write its own pid to FIFO, wait forever
//	try OP ARG …        attempt each OP on its ARG and print "OP ARG: ok[ detail]" or
//	                    "OP ARG: error", one line each, exit 0 (see try)
func helperMain(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "spawnhelper: no mode")
		return 2
	}
	mode, rest := args[0], args[1:]
	arg := func(i int) string {
		if i < len(rest) {
			return rest[i]
		}
		return ""
	}
	switch mode {
	case "env":
		env := os.Environ()
		slices.Sort(env)
		for _, kv := range env {
			fmt.Println(kv)
		}
	case "argv":
		for _, a := range rest {
			fmt.Println(a)
		}
	case "cwd":
		wd, _ := os.Getwd()
		fmt.Println(wd)
	case "exit":
		code, _ := strconv.Atoi(arg(0))
		fmt.Fprintln(os.Stdout, arg(1))
		fmt.Fprintln(os.Stderr, "err:"+arg(1))
		return code
	case "flood":
		n, _ := strconv.Atoi(arg(0))
		for i := range n {
			fmt.Fprintf(os.Stdout, "out %06d\n", i)
			fmt.Fprintf(os.Stderr, "err %06d\n", i)
		}
	case "block":
		tellFIFO(arg(0), os.Getpid())
		pauseForever()
	case "term-ok":
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM)
		tellFIFO(arg(0), os.Getpid())
		<-sigs
		fmt.Println("got SIGTERM")
		return 0
	case "stubborn", "stubborn-child":
		signal.Ignore(syscall.SIGTERM)
		if mode == "stubborn-child" {
			ready := os.NewFile(3, "ready")
			_, _ = ready.Write([]byte{1})
			_ = ready.Close()
			pauseForever()
		}
		r, w, err := os.Pipe()
		if err != nil {
			return 1
		}
		child := helperCommand("stubborn-child")
		child.ExtraFiles = []*os.File{w}
		if err := child.Start(); err != nil {
			return 1
		}
		_ = w.Close()
		_, _ = r.Read(make([]byte, 1))
		tellFIFO(arg(0), os.Getpid(), child.Process.Pid)
		pauseForever()
	case "sleeper":
		pauseForever()
	case "leave", "escape", "daemon-mid":
		child := helperCommand("sleeper", arg(0))
		if mode == "escape" {
			child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		}
		if err := child.Start(); err != nil {
			return 1
		}
		fmt.Printf("child %d\n", child.Process.Pid)
	case "daemon":
		mid := helperCommand("daemon-mid", arg(0))
		mid.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := mid.Run(); err != nil {
			return 1
		}
	case "escape-stay":
		child := helperCommand("sleeper", arg(0))
		child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := child.Start(); err != nil {
			return 1
		}
		tellFIFO(arg(1), os.Getpid())
		pauseForever()
	case "boxer":
		spec := Spec{Argv: []string{helperName, "sleeper", arg(0)}, Dir: arg(2), Env: os.Environ(),
			Box: &sandbox.Policy{Home: arg(3), Workspace: arg(2)}}
		if _, err := Start(spec, filepath.Join(arg(3), "sleeper.log")); err != nil {
			fmt.Fprintln(os.Stderr, "boxer:", err)
			return 1
		}
		tellFIFO(arg(1), os.Getpid())
		pauseForever()
	case "try":
		for i := 0; i+1 < len(rest); i += 2 {
			detail, err := try(rest[i], rest[i+1])
			if err != nil {
				fmt.Printf("%s %s: %v\n", rest[i], rest[i+1], err)
			} else {
				fmt.Printf("%s %s: ok%s\n", rest[i], rest[i+1], detail)
			}
		}
	default:
		fmt.Fprintln(os.Stderr, "spawnhelper: unknown mode", mode)
		return 2
	}
	return 0
}

// helperCommand is the helper started again by the helper, with its stdout and stderr.
func helperCommand(args ...string) *exec.Cmd {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, args...)
	cmd.Args[0] = helperName
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd
}

// tellFIFO writes the pids on one line to the FIFO at path, when there is one, after the
// PID namespace they are numbered in (a boxed helper's pids are its box's).
func tellFIFO(path string, pids ...int) {
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	ns, _ := os.Readlink("/proc/self/ns/pid")
	words := []string{ns}
	for _, p := range pids {
		words = append(words, strconv.Itoa(p))
	}
	_, _ = f.WriteString(strings.Join(words, " ") + "\n")
	_ = f.Close()
}

// pauseForever waits for signals until one ends the process.
func pauseForever() {
	for {
		_ = unix.Pause()
	}
}

// withFIFO makes a FIFO in the spec's directory (so that a boxed helper sees it), adds its
// path to the spec's arguments, and returns a function that waits (at most 30 s) for the
// helper's line of pids on it, and returns them as this process sees them (the host's pids
// of a boxed helper's processes).
func withFIFO(t *testing.T, spec *Spec) func() []int {
	t.Helper()
	path := filepath.Join(spec.Dir, "ready")
	spec.Argv = append(spec.Argv, path)
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	// Read and write: the open never blocks, and a read waits for a writer's line instead of
	// seeing end of file.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	r := bufio.NewReader(f)
	return func() []int {
		t.Helper()
		if err := f.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("waiting for the helper: %v", err)
		}
		words := strings.Fields(line)
		if len(words) < 2 {
			t.Fatalf("helper said %q", line)
		}
		var pids []int
		for _, w := range words[1:] {
			p, err := strconv.Atoi(w)
			if err != nil {
				t.Fatalf("helper said %q", line)
			}
			pids = append(pids, hostPid(t, words[0], p))
		}
		return pids
	}
}

// hostPid finds the process numbered pid in the PID namespace ns ("pid:[N]", as
// /proc/PID/ns/pid reads) and returns its pid here.
func hostPid(t *testing.T, ns string, pid int) int {
	t.Helper()
	names, _ := os.ReadDir("/proc")
	for _, e := range names {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if got, _ := os.Readlink("/proc/" + e.Name() + "/ns/pid"); got != ns {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
				if f := strings.Fields(v); len(f) > 0 && f[len(f)-1] == strconv.Itoa(pid) {
					return p
				}
			}
		}
	}
	t.Fatalf("no process %d in the PID namespace %s", pid, ns)
	return 0
}

// markedPids lists the processes (as this process numbers them) that have token among their
// arguments.
func markedPids(token string) []int {
	names, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range names {
		p, err := strconv.Atoi(e.Name())
		if err != nil || processGone(p) {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && slices.Contains(strings.Split(string(b), "\x00"), token) {
			out = append(out, p)
		}
	}
	return out
}

// newToken returns a word no other process has among its arguments.
func newToken(t *testing.T) string {
	return fmt.Sprintf("spawntest-%d-%d", os.Getpid(), tokenN.Add(1))
}

var tokenN atomic.Int64

// waitUnmarked waits (at most 10 s, polling) until no process carries token.
func waitUnmarked(t *testing.T, token string) {
	t.Helper()
	if !pollUntil(time.Now().Add(10*time.Second), func() bool { return len(markedPids(token)) == 0 }) {
		t.Fatalf("still running: %v, carrying %s", markedPids(token), token)
	}
}

// killMarked kills every process carrying token, and waits until they are gone.
func killMarked(t *testing.T, token string) {
	t.Helper()
	for _, p := range markedPids(token) {
		_ = unix.Kill(p, unix.SIGKILL)
	}
	waitUnmarked(t, token)
}

// helperEnv is an environment whose PATH finds the helper. GORACE stops a helper built with
// -race from sleeping a second before it exits 0.
func helperEnv() []string {
	return append(Env(Owner{Path: helperDir + ":/usr/bin:/bin", Home: "/nonexistent", Lang: "C.UTF-8"}), "GORACE=atexit_sleep_ms=0")
}

// helperSpec is a Spec running the helper with args in the box of a new workspace.
func helperSpec(t *testing.T, args ...string) Spec {
	t.Helper()
	ws := t.TempDir()
	box := boxFor(t, ws)
	return Spec{Argv: append([]string{helperName}, args...), Dir: ws, Env: helperEnv(), Box: box, Unboxed: box == nil}
}

// boxFor is the policy of a box around workspace ws, with a data directory of its own; nil
// on a machine where no box can be made (inside a box, say), where the tests of process
// groups, identities and stops then run unboxed and the box's own tests skip.
func boxFor(t *testing.T, ws string) *sandbox.Policy {
	t.Helper()
	if err := sandbox.Check(); err != nil {
		t.Logf("running unboxed: %v", err)
		return nil
	}
	return &sandbox.Policy{Home: t.TempDir(), Workspace: ws}
}

// processGone reports whether pid has exited (gone, or a zombie nobody has reaped yet).
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// waitGoneT waits (at most 10 s, polling) until every pid has exited and group pgid has no
// live member, and fails the test otherwise.
func waitGoneT(t *testing.T, pgid int, pids ...int) {
	t.Helper()
	ok := pollUntil(time.Now().Add(10*time.Second), func() bool {
		for _, p := range pids {
			if !processGone(p) {
				return false
			}
		}
		return len(groupMembers(pgid)) == 0
	})
	if !ok {
		t.Fatalf("still running: pids %v, group %d members %v", pids, pgid, groupMembers(pgid))
	}
}

// try attempts one operation for the helper's try mode:
//
//	read PATH       read the file; the detail is its content, quoted
//	list DIR        read the directory; the detail is its entries
//	stat PATH       lstat it
//	readlink PATH   read the link (for /proc/<pid>/cwd and the like)
//	write PATH      create or truncate it and write "boxed"
//	mkdir PATH      make the directory
//	remove PATH     remove the file or empty directory
//	rename OLD>NEW  rename
//	connect PATH    connect to the unix socket at PATH ("@name" for an abstract one)
//	signal PID      send signal 0, then SIGURG (harmless to a Go program)
//	ptrace PID      PTRACE_SEIZE the process (let go when the helper exits)
//	shm KEY         find the System V shared memory segment with that key
//	chmod PATH      make it mode 0777
//	utimes PATH     set its times to the epoch
//	xattr PATH      set the extended attribute user.boxed on it
func try(op, arg string) (string, error) {
	switch op {
	case "chmod":
		return "", os.Chmod(arg, 0o777)
	case "utimes":
		return "", os.Chtimes(arg, time.Unix(0, 0), time.Unix(0, 0))
	case "xattr":
		return "", unix.Setxattr(arg, "user.boxed", []byte("1"), 0)
	case "shm":
		key, _ := strconv.Atoi(arg)
		_, err := unix.SysvShmGet(key, 0, 0)
		return "", err
	case "read":
		b, err := os.ReadFile(arg)
		return fmt.Sprintf(" %q", b), err
	case "list":
		entries, err := os.ReadDir(arg)
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name()
		}
		return fmt.Sprintf(" %q", names), err
	case "stat":
		_, err := os.Lstat(arg)
		return "", err
	case "readlink":
		target, err := os.Readlink(arg)
		return " " + target, err
	case "write":
		return "", os.WriteFile(arg, []byte("boxed"), 0o600)
	case "mkdir":
		return "", os.Mkdir(arg, 0o700)
	case "remove":
		return "", os.Remove(arg)
	case "rename":
		from, to, _ := strings.Cut(arg, ">")
		return "", os.Rename(from, to)
	case "connect":
		c, err := net.Dial("unix", arg)
		if err == nil {
			_ = c.Close()
		}
		return "", err
	case "signal":
		pid, _ := strconv.Atoi(arg)
		if err := unix.Kill(pid, 0); err != nil {
			return "", fmt.Errorf("signal 0: %w", err)
		}
		return "", unix.Kill(pid, unix.SIGURG)
	case "ptrace":
		pid, _ := strconv.Atoi(arg)
		_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(pid), 0, 0, 0, 0)
		if e != 0 {
			return "", e
		}
		return "", nil
	}
	return "", fmt.Errorf("unknown operation %q", op)
}
