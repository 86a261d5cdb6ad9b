package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"buddi/plugins"
)

// testTool is host.exec over a home directory of the test's own.
func testTool(t *testing.T) (*execTool, Deps) {
	t.Helper()
	deps := Deps{Path: os.Getenv("PATH"), Home: t.TempDir(), Lang: "C.UTF-8", User: "tester"}
	m := Manifest(deps)
	return m.Tools[0].(*execTool), m.Tools[0].(*execTool).deps
}

// hostCall is a host.exec call with args.
func hostCall(t *testing.T, args map[string]any) plugins.Call {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return plugins.Call{Tool: "host.exec", Args: b, Agent: "dev"}
}

// exec runs a call and decodes its structured outcome.
func execute(t *testing.T, tool *execTool, ctx context.Context, args map[string]any) (plugins.Result, outcome, error) {
	t.Helper()
	res, err := tool.Execute(ctx, hostCall(t, args), nil)
	var out outcome
	if len(res.Data) > 0 {
		if jerr := json.Unmarshal(res.Data, &out); jerr != nil {
			t.Fatalf("result data %s: %v", res.Data, jerr)
		}
	}
	return res, out, err
}

// gone waits until pid has ended (no process, or a zombie left for init to reap), and
// reports whether it did before the deadline.
func gone(pid int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i:]), ") Z") {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// firstPid reads the pid a script echoed as its first line of stdout.
func firstPid(t *testing.T, text string) int {
	t.Helper()
	_, after, ok := strings.Cut(text, "--- stdout ---\n")
	if !ok {
		t.Fatalf("no stdout in %q", text)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(after, "\n", 2)[0]))
	if err != nil {
		t.Fatalf("no pid first in stdout: %q", text)
	}
	return pid
}

func TestSpecIsGatedReusableAndSaysWhatItCanDo(t *testing.T) {
	tool, _ := testTool(t)
	s := tool.Spec()
	if s.Name != "host.exec" || s.Tier != plugins.TierGated || !s.ReusableApproval {
		t.Fatalf("spec = %s %s reusable %v", s.Name, s.Tier, s.ReusableApproval)
	}
	for _, e := range []plugins.Effect{plugins.EffectExec, plugins.EffectFSWrite, plugins.EffectNetWrite} {
		if !slices.Contains(s.Effects, e) {
			t.Errorf("effects %v lack %s", s.Effects, e)
		}
	}
}

// The environment is PATH, HOME and LANG and what bash itself adds (PWD, SHLVL, _): nothing
// of buddi's, whatever buddi's own environment holds.
func TestBashRunsWithACleanEnvironmentAndReportsTheExitCode(t *testing.T) {
	t.Setenv("BUDDI_SECRET", "hunter2")
	t.Setenv("DATABASE_URL", "postgres://secret")
	tool, deps := testTool(t)
	res, out, err := execute(t, tool, context.Background(), map[string]any{
		"language": "bash", "script": "env\necho to-stderr >&2\nexit 3",
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode != 3 || !res.IsError || !strings.HasPrefix(res.Text, "Exit code 3") {
		t.Fatalf("exit %d, is error %v: %s", out.ExitCode, res.IsError, res.Text)
	}
	stdout, stderr, _ := strings.Cut(strings.TrimPrefix(res.Text[strings.Index(res.Text, "--- stdout ---\n"):], "--- stdout ---\n"), "\n--- stderr ---\n")
	if strings.TrimSpace(stderr) != "to-stderr" {
		t.Errorf("stderr = %q", stderr)
	}
	got := map[string]string{}
	for line := range strings.Lines(stdout) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		got[k] = v
	}
	want := map[string]string{"PATH": deps.Path, "HOME": deps.Home, "LANG": "C.UTF-8"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok && k != "PWD" && k != "SHLVL" && k != "_" {
			t.Errorf("the script saw %s=%q: only PATH, HOME and LANG are passed", k, got[k])
		}
	}
	if got["PWD"] != deps.Home {
		t.Errorf("ran in %q, want the home directory %q by default", got["PWD"], deps.Home)
	}
}

func TestPythonRunsInTheGivenDirectory(t *testing.T) {
	tool, deps := testTool(t)
	if _, err := lookPath("python3", deps.Path); err != nil {
		t.Skipf("python3 is not installed here, so the python case cannot run: %v", err)
	}
	dir := t.TempDir()
	res, out, err := execute(t, tool, context.Background(), map[string]any{
		"language": "python", "cwd": dir,
		"script": "import os, sys\nprint(os.getcwd())\nprint(sorted(k for k in os.environ if k.startswith('BUDDI')))\nsys.exit(0)",
	})
	if err != nil || out.ExitCode != 0 || res.IsError {
		t.Fatalf("%v, exit %d: %s", err, out.ExitCode, res.Text)
	}
	if !strings.Contains(res.Text, "--- stdout ---\n"+dir+"\n[]\n") {
		t.Errorf("python did not run in %s with no BUDDI_* variable: %s", dir, res.Text)
	}
}

// On the timeout the whole group is killed, a background child included, and the result
// says so.
func TestTimeoutKillsTheWholeGroup(t *testing.T) {
	tool, _ := testTool(t)
	start := time.Now()
	res, out, err := execute(t, tool, context.Background(), map[string]any{
		"language": "bash", "script": "sleep 300 &\necho $!\nsleep 300", "timeout_s": 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !out.TimedOut || !res.IsError || !strings.Contains(res.Text, "Stopped after 1s") {
		t.Fatalf("timed out %v, is error %v: %s", out.TimedOut, res.IsError, res.Text)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("took %v to stop a script with a 1 s timeout", took)
	}
	if pid := firstPid(t, res.Text); !gone(pid, 10*time.Second) {
		t.Errorf("the background child %d outlived the timeout", pid)
	}
}

// A script that ends leaves nothing running in its group.
func TestWhatAScriptLeavesRunningIsKilled(t *testing.T) {
	tool, _ := testTool(t)
	res, out, err := execute(t, tool, context.Background(), map[string]any{
		"language": "bash", "script": "sleep 300 &\necho $!",
	})
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("%v: %s", err, res.Text)
	}
	if pid := firstPid(t, res.Text); !gone(pid, 10*time.Second) {
		t.Errorf("the background child %d outlived the script", pid)
	}
}

// A cancelled call kills the group and is an error, not a result.
func TestCancelKillsTheGroup(t *testing.T) {
	tool, deps := testTool(t)
	marker := filepath.Join(deps.Home, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if b, err := os.ReadFile(marker); err == nil && strings.HasSuffix(string(b), "\n") {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	_, _, err := execute(t, tool, ctx, map[string]any{
		"language": "bash", "script": "sleep 300 &\necho $! > pid\nsleep 300",
	})
	if err == nil || !strings.Contains(err.Error(), "stopped before it finished") {
		t.Fatalf("cancelled: %v", err)
	}
	b, rerr := os.ReadFile(marker)
	if rerr != nil {
		t.Fatal(rerr)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid == 0 || !gone(pid, 10*time.Second) {
		t.Errorf("the background child %q outlived the cancellation", b)
	}
}

// Each stream keeps its last MaxStream bytes and the result says how much was cut.
func TestOutputIsCappedAndSaysSo(t *testing.T) {
	tool, _ := testTool(t)
	res, out, err := execute(t, tool, context.Background(), map[string]any{
		"language": "bash", "script": "head -c 200000 /dev/zero | tr '\\0' a\necho END\necho small >&2",
	})
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("%v: %.200s", err, res.Text)
	}
	if want := int64(200000 + 4 - MaxStream); out.StdoutDropped != want || out.StderrDropped != 0 {
		t.Errorf("dropped stdout %d stderr %d, want %d and 0", out.StdoutDropped, out.StderrDropped, want)
	}
	if !strings.Contains(res.Text, "--- stdout (cut: the first 134468 bytes were dropped, the last 65536 are shown) ---") ||
		!strings.Contains(res.Text, "aEND\n") || !strings.Contains(res.Text, "--- stderr ---\nsmall") {
		t.Errorf("result does not say the cut or lost the end: %.300s … %s", res.Text, res.Text[len(res.Text)-100:])
	}
}

// The card: a summary with the first line, the whole script in the preview; bad directories
// and interpreters refused before any action exists.
func TestDescribeShowsTheWholeScriptAndRefusesBadCalls(t *testing.T) {
	tool, deps := testTool(t)
	script := "\n  echo first line\nrm -rf ./build\ncurl https://example.com"
	env, err := tool.Describe(context.Background(), hostCall(t, map[string]any{"language": "bash", "script": script, "timeout_s": 30}))
	if err != nil {
		t.Fatal(err)
	}
	if env.Summary != "Run bash on the host: echo first line" {
		t.Errorf("summary = %q", env.Summary)
	}
	if !strings.HasSuffix(env.Preview, "\n\n"+script) || !strings.Contains(env.Preview, "in "+deps.Home+", for at most 30s") {
		t.Errorf("preview = %q", env.Preview)
	}
	again, _ := tool.Describe(context.Background(), hostCall(t, map[string]any{"language": "bash", "script": script, "timeout_s": 30}))
	a, _ := json.Marshal(env)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Errorf("Describe is not repeatable:\n%s\n%s", a, b)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"language": "bash", "script": "ls", "cwd": "relative/dir"}, "not an absolute path"},
		{map[string]any{"language": "bash", "script": "ls", "cwd": filepath.Join(deps.Home, "missing")}, "cannot be used"},
		{map[string]any{"language": "bash", "script": "ls", "timeout_s": 601}, "between 1 and 600"},
		{map[string]any{"language": "ruby", "script": "puts 1"}, "bash or python"},
	} {
		if _, err := tool.Describe(context.Background(), hostCall(t, c.args)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	tool.deps.Path = t.TempDir() // no bash there
	if _, err := tool.Describe(context.Background(), hostCall(t, map[string]any{"language": "bash", "script": "ls"})); err == nil || !strings.Contains(err.Error(), "bash is not installed") {
		t.Errorf("without bash on the PATH: %v", err)
	}
}
