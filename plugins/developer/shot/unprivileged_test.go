package shot_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"buddi/sandbox"
)

// TestChromiumsOwnSandboxInTheBox runs the browser tests again as an account that is not
// root (nobody, uid 65534), where the box lets Chromium keep its own sandbox (its namespaces
// and seccomp filter; Chromium refuses to start at all when it cannot make them): the test
// binary is copied where that account can run it and started under setpriv. Skipped when
// this process is not root (the tests above then already ran so), without setpriv, or
// without a box.
func TestChromiumsOwnSandboxInTheBox(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: the tests above ran as this account, with Chromium's own sandbox")
	}
	if err := sandbox.Check(); err != nil {
		t.Skipf("no box on this machine: %v", err)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv to become another account with")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "shot-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	for path, mode := range map[string]os.FileMode{dir: 0o755, tmp: 0o1777} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "shot.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
		bin, "-test.v", "-test.count=1", "-test.run", "TestTheBrowserRunsInTheBox|TestTheBrowserReachesOnlyThePagesOrigin")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + tmp, "TMPDIR=" + tmp, "GORACE=atexit_sleep_ms=0"}
	out, err := cmd.CombinedOutput()
	text := string(out)
	if strings.Contains(text, "no box on this machine") {
		t.Skipf("the unprivileged account gets no box here:\n%s", text)
	}
	if err != nil || !strings.Contains(text, "--- PASS: TestTheBrowserRunsInTheBox ") || !strings.Contains(text, "--- PASS: TestTheBrowserReachesOnlyThePagesOrigin ") {
		t.Fatalf("as uid 65534: %v\n%s", err, text)
	}
}
