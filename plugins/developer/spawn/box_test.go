package spawn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"buddi/sandbox"
)

// needBox skips a test on a machine where no box can be made, naming why.
func needBox(t *testing.T) {
	t.Helper()
	if err := sandbox.Check(); err != nil {
		t.Skipf("no box on this machine, so nothing to test: %v", err)
	}
}

// outsideTmp makes a directory that none of the box's private directories (/tmp, /var/tmp,
// /dev/shm, /run) covers, as ~/.buddi and ~/src are not covered, and that every account can
// reach (the unprivileged re-run uses it too): BUDDI_BOXTEST_DIR when the unprivileged re-run
// was given one, else a hidden directory in the package's own directory, else one under
// /var/lib, /opt, /srv or /mnt (a checkout under /tmp, as a CI runner may make, is covered by
// the box's private /tmp). It is removed when the test ends.
func outsideTmp(t *testing.T) string {
	t.Helper()
	if parent := os.Getenv("BUDDI_BOXTEST_DIR"); parent != "" {
		return makeBoxtestDir(t, parent)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, parent := range []string{wd, "/var/lib", "/opt", "/srv", "/mnt"} {
		real, err := filepath.EvalSymlinks(parent)
		if err != nil || coveredInBox(real) || !reachable(real) {
			continue
		}
		if dir, err := os.MkdirTemp(real, ".boxtest-"); err == nil {
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			return dir
		}
	}
	t.Skip("no directory outside /tmp that every account can reach to test in: set BUDDI_BOXTEST_DIR")
	return ""
}

// makeBoxtestDir makes the test's directory in parent.
func makeBoxtestDir(t *testing.T, parent string) string {
	t.Helper()
	dir, err := os.MkdirTemp(parent, ".boxtest-")
	if err != nil {
		t.Skipf("no directory outside /tmp to test in: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// coveredInBox reports whether path lies in one of the box's private directories.
func coveredInBox(path string) bool {
	for _, d := range []string{"/tmp", "/var/tmp", "/dev/shm", "/run"} {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

// reachable reports whether every directory from / down to path lets other accounts pass.
func reachable(path string) bool {
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if p == "/" {
			return true
		}
	}
}

// boxWorld is the layout the box tests attack: a data directory holding what buddi keeps
// there, a workspace with a repository and links into the data directory, a cache, and a
// directory of the owner's that the box may read but not write — all outside /tmp, where
// the real ones are.
type boxWorld struct {
	home, ws, cache, outside  string
	vault, token, log, dbSock string
	tmpSock, abstract         string // a socket in the host's /tmp, an abstract one
}

var abstractN atomic.Int64

func newBoxWorld(t *testing.T) *boxWorld {
	t.Helper()
	root := outsideTmp(t)
	w := &boxWorld{home: root + "/home", ws: root + "/ws", cache: root + "/cache", outside: root + "/outside"}
	w.vault, w.token = w.home+"/vault.json", w.home+"/cli-token"
	w.log = w.home + "/developer/logs/other.web.log"
	w.dbSock = w.home + "/pg/run/.s.PGSQL.5432"
	for _, d := range []string{w.home, w.ws, w.ws + "/.git", w.cache, w.outside, w.home + "/developer/logs", w.home + "/pg/run"} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		w.vault: "VAULT-SEALED", w.token: "CLI-TOKEN", w.log: "OTHER-AGENT-LOG",
		w.ws + "/.git/config": "[core]\n", w.ws + "/README": "hello\n", w.outside + "/notes": "owner notes\n",
	}
	for path, content := range files {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{w.ws + "/vault-link": w.vault, w.ws + "/home-link": w.home} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	w.tmpSock = t.TempDir() + "/tmux.sock"
	w.abstract = fmt.Sprintf("@buddi-boxtest-%d-%d", os.Getpid(), abstractN.Add(1))
	for _, addr := range []string{w.dbSock, w.tmpSock, w.abstract} {
		l, err := net.Listen("unix", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				_ = c.Close()
			}
		}()
	}
	return w
}

// policy is the run/start policy of the world, with its cache writable.
func (w *boxWorld) policy() *sandbox.Policy {
	return &sandbox.Policy{Home: w.home, Workspace: w.ws, Writable: []string{w.cache}}
}

// tryAll runs the helper's try mode with ops (op, arg pairs) in spec and returns each
// attempt's line, keyed "op arg".
func tryAll(t *testing.T, spec Spec, ops ...string) map[string]string {
	t.Helper()
	spec.Argv = append([]string{helperName, "try"}, ops...)
	res, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("the helper exited %d: %s", res.ExitCode, res.Output)
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(res.Output, "\n"), "\n") {
		key, result, _ := strings.Cut(line, ": ")
		out[key] = result
	}
	return out
}

// TestBoxKeepsBuddisDataAndProcess: what a script the agent wrote would try, each attempt
// made once unboxed (where the account's own rights allow it, it succeeds: that is the
// hole) and once boxed, where each must fail. The data directory is read directly, through
// a link in the workspace and through /proc/<buddi>/root; its database socket is looked at
// and connected to; buddi's environment, descriptors and directories are read from /proc;
// buddi is ptraced and signalled; sockets in the host's /tmp and abstract ones are dialled;
// a System V shared memory segment of buddi's account is looked up.
func TestBoxKeepsBuddisDataAndProcess(t *testing.T) {
	t.Parallel()
	needBox(t)
	w := newBoxWorld(t)
	me := strconv.Itoa(os.Getpid())
	held, err := os.Open(w.vault) // a descriptor buddi holds open
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	fromCwd, err := filepath.Rel(wd, w.vault)
	if err != nil {
		t.Fatal(err)
	}
	shmKey := 0x0b0c0000 | os.Getpid()&0xffff // a segment of buddi's (postgres keeps one)
	shmID, err := unix.SysvShmGet(shmKey, 4096, unix.IPC_CREAT|0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.SysvShmCtl(shmID, unix.IPC_RMID, nil)
	ops := []string{
		"shm", strconv.Itoa(shmKey),
		"read", w.vault,
		"read", w.token,
		"read", w.log,
		"read", w.ws + "/vault-link",
		"read", w.ws + "/home-link/cli-token",
		"read", "/proc/" + me + "/root" + w.vault,
		"read", "/proc/" + me + "/cwd/" + fromCwd,
		"read", "/proc/" + me + "/fd/" + strconv.Itoa(int(held.Fd())),
		"stat", w.dbSock,
		"connect", w.dbSock,
		"connect", "/proc/" + me + "/root" + w.dbSock,
		"read", "/proc/" + me + "/environ",
		"read", "/proc/" + me + "/mem",
		"readlink", "/proc/" + me + "/fd/" + strconv.Itoa(int(held.Fd())),
		"readlink", "/proc/" + me + "/cwd",
		"ptrace", me,
		"signal", me,
		"connect", w.tmpSock,
		"connect", w.abstract,
	}
	unboxed := helperSpec(t)
	unboxed.Dir, unboxed.Box, unboxed.Unboxed = w.ws, nil, true
	control := tryAll(t, unboxed, ops...)
	boxedSpec := helperSpec(t)
	boxedSpec.Dir, boxedSpec.Box = w.ws, w.policy()
	boxed := tryAll(t, boxedSpec, ops...)

	holes := 0
	for i := 0; i < len(ops); i += 2 {
		key := ops[i] + " " + ops[i+1]
		got, was := boxed[key], control[key]
		if strings.HasPrefix(was, "ok") {
			holes++
		}
		if got == "" || strings.HasPrefix(got, "ok") {
			t.Errorf("boxed %s: %q, want a refusal (unboxed: %q)", key, got, was)
		}
		for _, secret := range []string{"VAULT-SEALED", "CLI-TOKEN", "OTHER-AGENT-LOG"} {
			if strings.Contains(got, secret) {
				t.Errorf("boxed %s read %s", key, secret)
			}
		}
		t.Logf("%-70s unboxed: %-40.40s boxed: %s", key, was, got)
	}
	// The attempts are real: without the box, most of them work for this account.
	if holes < len(ops)/4 {
		t.Errorf("only %d of %d attempts worked without the box: the test does not show the hole", holes, len(ops)/2)
	}
	for _, key := range []string{"read " + w.vault, "read " + w.ws + "/vault-link", "read /proc/" + me + "/environ",
		"read /proc/" + me + "/fd/" + strconv.Itoa(int(held.Fd())), "connect " + w.dbSock, "connect " + w.abstract} {
		if !strings.HasPrefix(control[key], "ok") {
			t.Errorf("unboxed %s: %q: the control should succeed", key, control[key])
		}
	}
}

// TestBoxHidesTheDataDirectory: the data directory is there to name, and empty.
func TestBoxHidesTheDataDirectory(t *testing.T) {
	t.Parallel()
	needBox(t)
	w := newBoxWorld(t)
	spec := helperSpec(t)
	spec.Dir, spec.Box = w.ws, w.policy()
	got := tryAll(t, spec, "list", w.home, "list", w.ws+"/home-link", "write", w.home+"/planted", "mkdir", w.home+"/d")
	for _, key := range []string{"list " + w.home, "list " + w.ws + "/home-link"} {
		if g := got[key]; g != "ok []" && !strings.Contains(g, "permission denied") {
			t.Errorf("%s: %q, want nothing listed", key, g)
		}
	}
	for _, key := range []string{"write " + w.home + "/planted", "mkdir " + w.home + "/d"} {
		if strings.HasPrefix(got[key], "ok") {
			t.Errorf("%s: %q, want a refusal", key, got[key])
		}
	}
	if _, err := os.Stat(w.home + "/planted"); !os.IsNotExist(err) {
		t.Errorf("a file was planted in the data directory: %v", err)
	}
}

// TestBoxWrites: the box writes the workspace, its cache and its private /tmp, and nothing
// else: not a directory of the owner's it can read, not /etc, not .git for developer.run
// and developer.start, and it changes no mode, time or extended attribute of a file
// outside them; developer.git's policy writes .git.
func TestBoxWrites(t *testing.T) {
	t.Parallel()
	needBox(t)
	w := newBoxWorld(t)
	tmpName := fmt.Sprintf("/tmp/boxtest-%d-%d", os.Getpid(), abstractN.Add(1))
	etc := fmt.Sprintf("/etc/boxtest-%d", os.Getpid())
	t.Cleanup(func() { _ = os.Remove(etc); _ = os.Remove(tmpName) })
	ops := []string{
		"write", w.ws + "/made",
		"mkdir", w.ws + "/sub",
		"write", w.cache + "/pkg",
		"write", tmpName,
		"read", w.outside + "/notes",
		"write", w.outside + "/planted",
		"write", etc,
		"write", w.ws + "/.git/config",
		"write", w.ws + "/.git/hooks-planted",
		"remove", w.ws + "/.git/config",
		"rename", w.ws + "/.git>" + w.ws + "/moved-git",
		"chmod", w.ws + "/README",
		"chmod", w.outside + "/notes",
		"utimes", w.outside + "/notes",
		"xattr", w.outside + "/notes",
		"chmod", w.ws + "/.git/config",
	}
	spec := helperSpec(t)
	spec.Dir, spec.Box = w.ws, w.policy()
	got := tryAll(t, spec, ops...)
	want := map[string]bool{
		"write " + w.ws + "/made": true, "mkdir " + w.ws + "/sub": true, "write " + w.cache + "/pkg": true,
		"write " + tmpName: true, "read " + w.outside + "/notes": true, "chmod " + w.ws + "/README": true,
	}
	for i := 0; i < len(ops); i += 2 {
		key := ops[i] + " " + ops[i+1]
		if ok := strings.HasPrefix(got[key], "ok"); ok != want[key] {
			t.Errorf("%s: %q, want ok %v", key, got[key], want[key])
		}
	}
	if _, err := os.Stat(tmpName); !os.IsNotExist(err) {
		t.Errorf("the box's /tmp file is on the host: %v", err)
	}
	for _, p := range []string{w.outside + "/planted", etc, w.ws + "/.git/hooks-planted", w.ws + "/moved-git"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists: %v", p, err)
		}
	}
	if b, _ := os.ReadFile(w.ws + "/.git/config"); string(b) != "[core]\n" {
		t.Errorf(".git/config is now %q", b)
	}
	if fi, err := os.Stat(w.outside + "/notes"); err != nil || fi.Mode().Perm() != 0o600 || fi.ModTime().Unix() == 0 {
		t.Errorf("the owner's file outside the box was changed: %v, %v", fi.Mode(), err)
	}

	// developer.git's policy: .git is writable.
	gitSpec := helperSpec(t)
	gitPolicy := w.policy()
	gitPolicy.GitWritable = true
	gitSpec.Dir, gitSpec.Box = w.ws, gitPolicy
	got = tryAll(t, gitSpec, "write", w.ws+"/.git/index.lock", "write", w.outside+"/planted")
	if !strings.HasPrefix(got["write "+w.ws+"/.git/index.lock"], "ok") || strings.HasPrefix(got["write "+w.outside+"/planted"], "ok") {
		t.Errorf("git policy: %q", got)
	}
}

// TestBoxRunsOrdinaryPrograms: the box is a place to work: a shell, git on a repository,
// the Go and Node toolchains when this machine has them, with output to /dev/stdout.
func TestBoxRunsOrdinaryPrograms(t *testing.T) {
	t.Parallel()
	needBox(t)
	w := newBoxWorld(t)
	if err := os.RemoveAll(w.ws + "/.git"); err != nil {
		t.Fatal(err)
	}
	path := helperDir + ":/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin"
	env := append(Env(Owner{Path: path, Home: w.outside, Lang: "C.UTF-8", TmpDir: "/tmp"}),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GORACE=atexit_sleep_ms=0")
	if git, err := exec.LookPath("git"); err == nil {
		init := exec.Command(git, "init", "-q", w.ws)
		init.Env = env
		if out, err := init.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	}
	commands := []struct{ argv, want []string }{
		{[]string{"sh", "-c", "echo out; echo err >&2; echo via-dev-stdout > /dev/stdout; cat README; ls /tmp | wc -l"}, []string{"out\n", "err\n", "via-dev-stdout\n", "hello\n", "0\n"}},
		{[]string{"git", "--version"}, []string{"git version"}},
		{[]string{"git", "status", "--porcelain"}, []string{"?? README"}},
		{[]string{"go", "version"}, []string{"go version go"}},
		{[]string{"node", "-e", "console.log(require('fs').readFileSync('README','utf8').trim())"}, []string{"hello"}},
	}
	for _, c := range commands {
		if _, err := Resolve(c.argv[0], path); err != nil {
			t.Logf("%s is not on this machine: skipped", c.argv[0])
			continue
		}
		res, err := Run(context.Background(), Spec{Argv: c.argv, Dir: w.ws, Env: env, Box: w.policy(), Timeout: time.Minute})
		if err != nil {
			t.Errorf("%q: %v", c.argv, err)
			continue
		}
		for _, want := range c.want {
			if res.ExitCode != 0 || !strings.Contains(res.Output, want) {
				t.Errorf("%q: exit %d, output %q, want it to hold %q", c.argv, res.ExitCode, res.Output, want)
			}
		}
	}
}

// TestBoxStartedProcess: developer.start's processes are boxed the same way, and may open
// their own log (kept in the data directory, which they cannot otherwise see) again as
// /dev/stdout.
func TestBoxStartedProcess(t *testing.T) {
	t.Parallel()
	needBox(t)
	w := newBoxWorld(t)
	logPath := filepath.Join(w.home, "developer/logs/agent.web.log") // where the plugin keeps it
	spec := Spec{Argv: []string{"sh", "-c", "cat " + w.vault + " || echo refused; echo again >> /dev/stdout"},
		Dir: w.ws, Env: helperEnv(), Box: w.policy()}
	p, err := Start(spec, logPath)
	if err != nil {
		t.Fatal(err)
	}
	if ex := p.Exit(); ex.Code != 0 {
		t.Errorf("exit %+v", ex)
	}
	b, _ := os.ReadFile(logPath)
	if strings.Contains(string(b), "VAULT-SEALED") || !strings.Contains(string(b), "refused\nagain\n") {
		t.Errorf("log %q", b)
	}
}

// TestBoxRefusedIsNeverUnboxed: a box that cannot be made or applied is an error from Run
// and Start, and nothing runs: a policy that breaks the rules, a directory outside the
// box's workspace, a program the box hides (on a PATH entry inside the data directory).
func TestBoxRefusedIsNeverUnboxed(t *testing.T) {
	t.Parallel()
	needBox(t)
	w := newBoxWorld(t)
	ran := w.ws + "/ran"
	bin := w.home + "/bin"
	if err := os.Mkdir(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin+"/tool", []byte("#!/bin/sh\necho ran > "+ran+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := Env(Owner{Path: bin + ":/usr/bin:/bin"})
	script := []string{"sh", "-c", "echo ran > " + ran}
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"a cache in a system directory", Spec{Argv: script, Dir: w.ws, Env: env,
			Box: &sandbox.Policy{Home: w.home, Workspace: w.ws, Writable: []string{"/proc/sys"}}}, "system directory"},
		{"a cache inside the data directory", Spec{Argv: script, Dir: w.ws, Env: env,
			Box: &sandbox.Policy{Home: w.home, Workspace: w.ws, Writable: []string{w.home + "/npm"}}}, "inside buddi's data directory"},
		{"a directory outside the workspace", Spec{Argv: script, Dir: w.outside, Env: env, Box: w.policy()}, "not inside the workspace"},
		{"a program the box hides", Spec{Argv: []string{"tool"}, Dir: w.ws, Env: env, Box: w.policy()}, "was not run"},
	}
	for _, tt := range tests {
		_, err := Run(context.Background(), tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "sandbox") {
			t.Errorf("Run, %s: %v, want an error saying %q", tt.name, err, tt.want)
		}
		p, err := Start(tt.spec, filepath.Join(w.outside, "log"))
		if err == nil {
			p.Exit()
			t.Errorf("Start, %s: started", tt.name)
		} else if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Start, %s: %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
	var le *sandbox.LaunchError
	_, err := Run(context.Background(), tests[3].spec)
	if !errors.As(err, &le) || le.Stage != "exec" {
		t.Errorf("a hidden program: %v, want a *sandbox.LaunchError at exec", err)
	}
	if _, err := os.Stat(ran); !os.IsNotExist(err) {
		t.Errorf("something ran: %v", err)
	}
}

// TestBoxUnprivileged runs this package's tests again as an account that is not root
// (nobody, uid 65534), where the box is made in a user namespace, so the process groups,
// identities and stops are checked there too: the test binary is copied where that
// account can run it and started under setpriv, with a directory outside /tmp it owns.
// It is skipped when this process is not root (the tests above then already ran
// unprivileged), when setpriv is missing, or when the re-run finds no box for that account.
func TestBoxUnprivileged(t *testing.T) {
	if os.Getenv("BUDDI_BOXTEST_UNPRIVILEGED") != "" {
		t.Skip("this is the unprivileged re-run")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: the box tests above ran as this unprivileged account")
	}
	needBox(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv to become another account with")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const nobody = 65534
	tmp, err := os.MkdirTemp("", "spawn-unprivileged-") // t.TempDir's parent is 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	scratch := outsideTmp(t)
	for _, d := range []string{tmp, scratch} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(scratch, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	tmpdir := tmp + "/tmp"
	if err := os.Mkdir(tmpdir, 0o1777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmpdir, 0o1777); err != nil {
		t.Fatal(err)
	}
	bin := tmp + "/spawn.test"
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
		bin, "-test.v", "-test.count=1")
	cmd.Dir = wd
	cmd.Env = []string{"PATH=/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin", "HOME=" + scratch, "TMPDIR=" + tmpdir,
		"BUDDI_BOXTEST_DIR=" + scratch, "BUDDI_BOXTEST_UNPRIVILEGED=1", "GORACE=atexit_sleep_ms=0"}
	out, err := cmd.CombinedOutput()
	text := string(out)
	if strings.Contains(text, "no box on this machine") {
		t.Skipf("the unprivileged account gets no box here:\n%s", text)
	}
	if err != nil || !strings.Contains(text, "\nPASS\n") {
		t.Fatalf("the unprivileged re-run failed: %v\n%s", err, text)
	}
	for _, name := range []string{"TestBoxKeepsBuddisDataAndProcess", "TestBoxHidesTheDataDirectory", "TestBoxWrites",
		"TestBoxRunsOrdinaryPrograms", "TestBoxStartedProcess", "TestBoxRefusedIsNeverUnboxed", "TestBoxHidesTheOwnersSecrets",
		"TestBoxReportsWhatItQuarantined", "TestBoxEndsWhatLeftTheGroup", "TestTimeoutAndStopEndAProgramWithNoHandler", "TestBoxEndsWithBuddi",
		"TestRun", "TestRunCancel", "TestRunTimeout", "TestStartIdentityAliveStop", "TestStopKillsTheGroup"} {
		if !strings.Contains(text, "--- PASS: "+name+" ") {
			t.Errorf("the unprivileged re-run did not pass %s:\n%s", name, text)
		}
	}
	t.Logf("as uid 65534:\n%s", text)
}

// TestBoxHidesTheOwnersSecrets: the paths a policy lists as Hidden (here an owner's ~/.ssh,
// ~/.npmrc and a ~/.gitconfig that is a link into a dotfiles directory) read as empty or
// not at all, by name and through the link's target, while the rest of the owner's home
// reads as usual.
func TestBoxHidesTheOwnersSecrets(t *testing.T) {
	t.Parallel()
	needBox(t)
	w := newBoxWorld(t)
	owner := w.outside // plays the owner's home
	for path, content := range map[string]string{
		owner + "/.ssh/id_ed25519": "SSH-KEY", owner + "/.npmrc": "//registry/:_authToken=NPM-TOKEN",
		owner + "/dotfiles/gitconfig": "[credential]\n\thelper = store GIT-SECRET\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(owner+"/dotfiles/gitconfig", owner+"/.gitconfig"); err != nil {
		t.Fatal(err)
	}
	policy := w.policy()
	policy.Hidden = []string{owner + "/.ssh", owner + "/.npmrc", owner + "/.gitconfig"}
	ops := []string{
		"read", owner + "/.ssh/id_ed25519", "list", owner + "/.ssh", "read", owner + "/.npmrc",
		"read", owner + "/.gitconfig", "read", owner + "/dotfiles/gitconfig", "read", owner + "/notes",
	}
	unboxed := helperSpec(t)
	unboxed.Dir, unboxed.Box, unboxed.Unboxed = w.ws, nil, true
	control := tryAll(t, unboxed, ops...)
	spec := helperSpec(t)
	spec.Dir, spec.Box = w.ws, policy
	got := tryAll(t, spec, ops...)
	for i := 0; i < len(ops); i += 2 {
		key := ops[i] + " " + ops[i+1]
		for _, secret := range []string{"SSH-KEY", "NPM-TOKEN", "GIT-SECRET"} {
			if strings.Contains(got[key], secret) {
				t.Errorf("boxed %s: %q", key, got[key])
			}
		}
		t.Logf("%-60s unboxed: %-30.30s boxed: %s", key, control[key], got[key])
	}
	if got["list "+owner+"/.ssh"] != "ok []" {
		t.Errorf("boxed ~/.ssh lists %q", got["list "+owner+"/.ssh"])
	}
	if got["read "+owner+"/notes"] != `ok "owner notes\n"` {
		t.Errorf("the rest of the home: %q", got["read "+owner+"/notes"])
	}
	if !strings.Contains(control["read "+owner+"/.npmrc"], "NPM-TOKEN") {
		t.Errorf("unboxed control: %q", control["read "+owner+"/.npmrc"])
	}
}

// TestBoxReportsWhatItQuarantined: Run's Result and a started Process say which repository
// the boxed command left in its workspace was moved aside once it ended; a repository that
// was there before is read-only in the box and stays where it is.
func TestBoxReportsWhatItQuarantined(t *testing.T) {
	t.Parallel()
	needBox(t)
	w := newBoxWorld(t)
	if err := os.MkdirAll(w.ws+"/vendor/lib/.git", 0o755); err != nil {
		t.Fatal(err)
	}
	plant := "mkdir -p node_modules/pkg/.git && echo '[core]' > node_modules/pkg/.git/config; echo x >> vendor/lib/.git/config || echo refused"
	res, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", plant}, Dir: w.ws, Env: helperEnv(), Box: w.policy()})
	if err != nil {
		t.Fatal(err)
	}
	q := res.Quarantine.Quarantined
	if !strings.Contains(res.Output, "refused") || len(q) != 1 || q[0].Path != w.ws+"/node_modules/pkg/.git" || q[0].Moved == "" {
		t.Errorf("run: output %q, report %+v", res.Output, res.Quarantine)
	}
	if _, err := os.Stat(w.ws + "/vendor/lib/.git"); err != nil {
		t.Errorf("the repository that was there before: %v", err)
	}

	p, err := Start(Spec{Argv: []string{"sh", "-c", "mkdir -p web/.git"}, Dir: w.ws, Env: helperEnv(), Box: w.policy()},
		filepath.Join(w.outside, "web.log"))
	if err != nil {
		t.Fatal(err)
	}
	if q := p.Quarantine().Quarantined; len(q) != 1 || q[0].Path != w.ws+"/web/.git" || q[0].Moved == "" {
		t.Errorf("start: report %+v", p.Quarantine())
	}
}
