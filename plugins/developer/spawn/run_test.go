package spawn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"buddi/sandbox"
)

func TestRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	box := boxFor(t, dir)
	tests := []struct {
		name     string
		command  string
		wantCode int
		want     string // the whole output
	}{
		{"argv is passed as words, nothing expands", `spawnhelper argv '$HOME' "a b" * ; ~/x a\b`, 0,
			"$HOME\na b\n*\n;\n~/x\na\\b\n"},
		{"cwd is Dir", "spawnhelper cwd", 0, dir + "\n"},
		{"exit code, both streams", "spawnhelper exit 3 hello", 3, "hello\nerr:hello\n"},
		{"success", "spawnhelper exit 0 fine", 0, "fine\nerr:fine\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec, err := SpecFor(tt.command, dir, helperEnv())
			if err != nil {
				t.Fatal(err)
			}
			spec.Box, spec.Unboxed = box, box == nil
			res, err := Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.wantCode || res.Ended != Exited || res.Signal != 0 {
				t.Errorf("got code %d ended %v signal %v, want code %d, exited", res.ExitCode, res.Ended, res.Signal, tt.wantCode)
			}
			if res.Output != tt.want || res.Dropped != 0 {
				t.Errorf("got output %q (dropped %d), want %q", res.Output, res.Dropped, tt.want)
			}
			if res.Path != filepath.Join(helperDir, helperName) || res.Argv[0] != helperName {
				t.Errorf("got path %q argv %q", res.Path, res.Argv)
			}
			if res.Elapsed <= 0 || res.OutputHeld {
				t.Errorf("got elapsed %v, output held %v", res.Elapsed, res.OutputHeld)
			}
			waitGoneT(t, res.Pid)
		})
	}
}

// TestRunEnvironment: the command sees exactly the environment the plugin built, whatever
// buddi's own holds.
func TestRunEnvironment(t *testing.T) {
	for _, kv := range poisoned {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	owner := Capture(append(slices.Clone(poisoned),
		"PATH="+helperDir+":/usr/bin:/bin", "HOME=/home/owner", "USER=owner", "LANG=en_GB.UTF-8",
		"LC_ALL=en_GB.UTF-8", "TERM=xterm-256color", "TMPDIR=/tmp", "SHELL=/bin/zsh"))
	env := Env(owner)
	ws := t.TempDir()
	box := boxFor(t, ws)
	res, err := Run(context.Background(), Spec{Argv: []string{helperName, "env"}, Dir: ws, Env: env, Box: box, Unboxed: box == nil})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(res.Output, "\n"), "\n")
	want := slices.Sorted(slices.Values(env))
	if !slices.Equal(got, want) {
		t.Errorf("the command saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Only PATH given: the command gets only PATH, not buddi's environment.
	res, err = Run(context.Background(), Spec{Argv: []string{helperName, "env"}, Dir: ws, Env: []string{"PATH=" + helperDir}, Box: box, Unboxed: box == nil})
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "PATH="+helperDir+"\n" {
		t.Errorf("got environment %q, want only PATH", res.Output)
	}
}

func TestRunOutputBound(t *testing.T) {
	t.Parallel()
	const n = 20000 // 2 × 20000 lines of 11 bytes: 440,000 bytes
	res, err := Run(context.Background(), helperSpec(t, "flood", strconv.Itoa(n)))
	if err != nil {
		t.Fatal(err)
	}
	total := int64(2 * n * 11)
	if len(res.Output) != MaxOutput || res.Dropped != total-MaxOutput {
		t.Errorf("got %d bytes kept, %d dropped; want %d kept, %d dropped", len(res.Output), res.Dropped, MaxOutput, total-MaxOutput)
	}
	// The tail, with both streams interleaved in the order they were written.
	wantEnd := fmt.Sprintf("out %06d\nerr %06d\nout %06d\nerr %06d\n", n-2, n-2, n-1, n-1)
	if !strings.HasSuffix(res.Output, wantEnd) {
		t.Errorf("output ends %q, want %q", res.Output[len(res.Output)-60:], wantEnd)
	}
}

// TestRunKillsWhatItLeaves: a command that exits leaving a child in its group (holding the
// output pipe open) returns, and the child is gone.
func TestRunKillsWhatItLeaves(t *testing.T) {
	t.Parallel()
	token := newToken(t)
	res, err := Run(context.Background(), helperSpec(t, "leave", token))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Output, "child ") || res.ExitCode != 0 || res.Ended != Exited || res.OutputHeld {
		t.Errorf("got output %q code %d ended %v held %v", res.Output, res.ExitCode, res.Ended, res.OutputHeld)
	}
	waitGoneT(t, res.Pid)
	waitUnmarked(t, token)
}

// TestBoxEndsWhatLeftTheGroup: a boxed command whose child leaves its process group (a
// session of its own, or a double fork that leaves an orphan) leaves nothing running once
// Run returns, nor once Stop has stopped a started one: the box is a PID namespace, and
// the command is its first process. Unboxed, the control, the child is still there (and
// Run says the output was held), and is killed by the test.
func TestBoxEndsWhatLeftTheGroup(t *testing.T) {
	t.Parallel()
	needBox(t)
	for _, mode := range []string{"escape", "daemon"} {
		t.Run("run "+mode, func(t *testing.T) {
			t.Parallel()
			token := newToken(t)
			spec := helperSpec(t, mode, token)
			spec.Grace = 100 * time.Millisecond
			res, err := Run(context.Background(), spec)
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("boxed: %v, exit %d: %s", err, res.ExitCode, res.Output)
			}
			if res.OutputHeld {
				t.Errorf("boxed: the output was held")
			}
			waitUnmarked(t, token)

			control := newToken(t)
			spec = helperSpec(t, mode, control)
			spec.Grace, spec.Box, spec.Unboxed = 100*time.Millisecond, nil, true
			res, err = Run(context.Background(), spec)
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("unboxed: %v, exit %d: %s", err, res.ExitCode, res.Output)
			}
			if len(markedPids(control)) == 0 {
				t.Errorf("unboxed, the %s child is gone too: the control does not show the hole", mode)
			}
			killMarked(t, control)
		})
	}
	t.Run("start and stop", func(t *testing.T) {
		t.Parallel()
		for _, boxed := range []bool{true, false} {
			token := newToken(t)
			spec := helperSpec(t, "escape-stay", token)
			if !boxed {
				spec.Box, spec.Unboxed = nil, true
			}
			ready := withFIFO(t, &spec)
			p, _ := startHelper(t, spec)
			ready()
			if len(markedPids(token)) == 0 {
				t.Fatalf("boxed %v: the child never ran", boxed)
			}
			if err := p.Stop(100 * time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if boxed {
				waitUnmarked(t, token)
				continue
			}
			if len(markedPids(token)) == 0 {
				t.Errorf("unboxed, the child is gone too: the control does not show the hole")
			}
			killMarked(t, token)
		}
	})
}

// TestBoxEndsWithBuddi: a boxed process whose buddi dies without stopping it (SIGKILL) ends
// with it, and its box with it.
func TestBoxEndsWithBuddi(t *testing.T) {
	t.Parallel()
	needBox(t)
	token := newToken(t)
	ws, home := t.TempDir(), t.TempDir()
	boxer := Spec{Argv: []string{helperName, "boxer", token}, Dir: ws, Env: helperEnv(), Unboxed: true}
	ready := withFIFO(t, &boxer)
	boxer.Argv = append(boxer.Argv, ws, home)
	p, _ := startHelper(t, boxer)
	ready()
	if !pollUntil(time.Now().Add(10*time.Second), func() bool { return len(markedPids(token)) > 0 }) {
		t.Fatal("the boxed sleeper never ran")
	}
	if err := unix.Kill(p.Identity().Pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	waitUnmarked(t, token)
}

// TestRunOutputHeldByEscapee: unboxed, a child that left the group is out of reach; Run
// still returns once the grace has passed, and says the output was held.
func TestRunOutputHeldByEscapee(t *testing.T) {
	t.Parallel()
	token := newToken(t)
	spec := helperSpec(t, "escape", token)
	spec.Grace, spec.Box, spec.Unboxed = 100*time.Millisecond, nil, true
	res, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OutputHeld || res.ExitCode != 0 {
		t.Errorf("got held %v code %d, want held, 0", res.OutputHeld, res.ExitCode)
	}
	// The escapee is this test's own grandchild; stop it by its identity.
	for _, child := range markedPids(token) {
		if id, err := Lookup(child); err == nil {
			if err := Stop(id, time.Second); err != nil {
				t.Errorf("stop the escapee: %v", err)
			}
		}
	}
	waitUnmarked(t, token)
}

// TestRunTimeout: the command's group gets SIGTERM when the timeout passes. A boxed Go
// program, the first process of its box, handles SIGTERM itself (its runtime catches it)
// and ends on it with status 2, since its own signal back to itself is not delivered; or,
// caught before its runtime has set its handlers, gets SIGKILL at once in the SIGTERM's
// place.
func TestRunTimeout(t *testing.T) {
	t.Parallel()
	spec := helperSpec(t, "block")
	spec.Timeout = 100 * time.Millisecond
	spec.Grace = 30 * time.Second
	res, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	byTerm := res.Signal == syscall.SIGTERM || spec.Box != nil && (res.ExitCode == 2 || res.Signal == syscall.SIGKILL)
	if res.Ended != TimedOut || !byTerm || res.Elapsed > 20*time.Second {
		t.Errorf("got ended %v code %d signal %v after %v, want timed out by SIGTERM", res.Ended, res.ExitCode, res.Signal, res.Elapsed)
	}
	waitGoneT(t, res.Pid)
}

// TestTimeoutAndStopEndAProgramWithNoHandler: a boxed program that has no handler for
// SIGTERM (sleep, a dev server that never asked for it) is the first process of its box,
// which the kernel spares the SIGTERM; it still ends at once on a timeout and on Stop, as it
// would unboxed, not only when the grace (a minute here) has passed.
func TestTimeoutAndStopEndAProgramWithNoHandler(t *testing.T) {
	t.Parallel()
	needBox(t)
	spec := helperSpec(t)
	spec.Argv, spec.Timeout, spec.Grace = []string{"sleep", "600"}, 100*time.Millisecond, time.Minute
	started := time.Now()
	res, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ended != TimedOut || res.Signal != syscall.SIGKILL || time.Since(started) > 20*time.Second {
		t.Errorf("got ended %v signal %v after %v, want timed out and killed within seconds", res.Ended, res.Signal, time.Since(started))
	}
	waitGoneT(t, res.Pid)

	spec.Timeout = 0
	p, _ := startHelper(t, spec)
	if !pollUntil(time.Now().Add(10*time.Second), func() bool { return !termDroppedOrGone(p.Identity().Pid) }) {
		t.Fatal("the started sleep never ran")
	}
	started = time.Now()
	if err := Stop(p.Identity(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if time.Since(started) > 20*time.Second {
		t.Errorf("Stop took %v, want seconds", time.Since(started))
	}
	<-p.Done()
}

// termDroppedOrGone is false once pid runs sleep as the first process of its box (so a
// SIGTERM to it would be dropped), true until then.
func termDroppedOrGone(pid int) bool {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b)) != "sleep" || !termDropped(pid)
}

func TestRunCancel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		mode       string
		grace      time.Duration
		wantCode   int
		wantSignal syscall.Signal
		wantOutput string
	}{
		{"SIGTERM honoured", "term-ok", 30 * time.Second, 0, 0, "got SIGTERM\n"},
		{"SIGTERM ignored by the command and its child: SIGKILL after the grace", "stubborn", 200 * time.Millisecond, -1, syscall.SIGKILL, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := helperSpec(t, tt.mode)
			ready := withFIFO(t, &spec)
			spec.Grace = tt.grace
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pids := make(chan []int, 1)
			go func() {
				p := ready()
				cancel()
				pids <- p
			}()
			res, err := Run(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			p := <-pids
			if res.Ended != Cancelled || res.ExitCode != tt.wantCode || res.Signal != tt.wantSignal || res.Output != tt.wantOutput {
				t.Errorf("got ended %v code %d signal %v output %q, want cancelled, %d, %v, %q",
					res.Ended, res.ExitCode, res.Signal, res.Output, tt.wantCode, tt.wantSignal, tt.wantOutput)
			}
			if p[0] != res.Pid {
				t.Errorf("helper said pid %d, result says %d", p[0], res.Pid)
			}
			waitGoneT(t, res.Pid, p...)
		})
	}
}

func TestRunRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	box := &sandbox.Policy{Home: t.TempDir(), Workspace: dir} // every refusal comes before the box
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		spec Spec
		want error
		text string // in the message
	}{
		{"no box", context.Background(), Spec{Argv: []string{helperName}, Dir: dir, Env: helperEnv()}, ErrNoBox, "no sandbox policy"},
		{"box and unboxed", context.Background(), Spec{Argv: []string{helperName}, Dir: dir, Env: helperEnv(), Box: box, Unboxed: true}, nil, "set one of them"},
		{"no argv", context.Background(), Spec{Dir: dir, Env: helperEnv()}, ErrNoCommand, "no command"},
		{"not on PATH", context.Background(), Spec{Argv: []string{"no-such-program-x"}, Dir: dir, Env: helperEnv(), Box: box}, ErrNotFound, `"no-such-program-x"`},
		{"nil environment has no PATH", context.Background(), Spec{Argv: []string{helperName}, Dir: dir, Box: box}, ErrNotFound, `PATH ""`},
		{"absolute program", context.Background(), Spec{Argv: []string{"/bin/true"}, Dir: dir, Env: helperEnv(), Box: box}, ErrNotBare, "/bin/true"},
		{"relative program", context.Background(), Spec{Argv: []string{"./spawnhelper"}, Dir: helperDir, Env: helperEnv(), Box: box}, ErrNotBare, "./spawnhelper"},
		{"relative dir", context.Background(), Spec{Argv: []string{helperName}, Dir: "ws", Env: helperEnv(), Box: box}, nil, "not absolute"},
		{"missing dir", context.Background(), Spec{Argv: []string{helperName}, Dir: dir + "/missing", Env: helperEnv(), Box: box}, os.ErrNotExist, "missing"},
		{"context already done", cancelled, Spec{Argv: []string{helperName, "exit", "0"}, Dir: dir, Env: helperEnv(), Box: box}, context.Canceled, "spawnhelper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Run(tt.ctx, tt.spec)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("got %v, want %v mentioning %q", err, tt.want, tt.text)
			}
		})
	}
}

func TestSpecFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		command string
		want    []string
		err     bool
	}{
		{"go test ./...", []string{"go", "test", "./..."}, false},
		{`vitest run -t 'adds two'`, []string{"vitest", "run", "-t", "adds two"}, false},
		{"   ", nil, true},
		{`echo "open`, nil, true},
	}
	for _, tt := range tests {
		spec, err := SpecFor(tt.command, "/ws", nil)
		if (err != nil) != tt.err || !slices.Equal(spec.Argv, tt.want) {
			t.Errorf("SpecFor(%q) = %q, %v; want %q, error %v", tt.command, spec.Argv, err, tt.want, tt.err)
		}
	}
}

// TestRunLeavesNoProcess: after many runs of every kind, no process of this test's is left
// in any of their groups (the goroutines are checked by TestMain).
func TestRunLeavesNoProcess(t *testing.T) {
	t.Parallel()
	var pgids []int
	for _, args := range [][]string{{"exit", "0", "x"}, {"leave"}, {"flood", "10"}} {
		for range 5 {
			res, err := Run(context.Background(), helperSpec(t, args...))
			if err != nil {
				t.Fatal(err)
			}
			pgids = append(pgids, res.Pid)
		}
	}
	// A killed leftover is reparented to init and stays in the group as a zombie until init
	// reaps it, which is init's business: what must be gone is every live member.
	for _, g := range pgids {
		waitGoneT(t, g)
	}
}
