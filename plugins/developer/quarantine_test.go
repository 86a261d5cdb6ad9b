package developer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"buddi/internal/pgtest"
	"buddi/plugins/developer/runlist"
	"buddi/sandbox"
)

// A repository a boxed command leaves in the workspace (here a nested .git, which the owner's
// git would obey outside any box) is moved aside when the command ends, and the tool's result
// says so: developer.run's at once, developer.stop's for a started process, and
// developer.output's once a started process has exited by itself.
func TestQuarantineReachesTheResult(t *testing.T) {
	if err := sandbox.Check(); err != nil {
		t.Skipf("this machine cannot sandbox commands, so the box is not tested here: %v", err)
	}
	host := &localHost{}
	b := setup(t, withHost(host))
	t.Cleanup(func() { _ = host.StopAll(context.Background(), agent) })
	writeFile(t, filepath.Join(b.ws, "Makefile"), "plant:\n\tmkdir -p run/.git\n"+
		"serve:\n\tmkdir -p served/.git && sleep 300\n"+
		"once:\n\tmkdir -p once/.git\n")
	b.setMode(t, runlist.ModeRun)

	out := b.mustRun(t, call("run", `{"command":"make plant"}`), nil)
	if !strings.Contains(out, filepath.Join(b.ws, "run", ".git")) || !strings.Contains(out, "moved it to") {
		t.Errorf("run: %s", out)
	}
	if _, err := os.Lstat(filepath.Join(b.ws, "run", ".git")); !os.IsNotExist(err) {
		t.Errorf("run/.git is still there: %v", err)
	}

	b.mustRun(t, call("start", `{"name":"web","command":"make serve"}`), nil)
	pgtest.Eventually(t, "the started process to plant served/.git", func() bool {
		_, err := os.Lstat(filepath.Join(b.ws, "served", ".git"))
		return err == nil
	})
	out = b.mustRun(t, call("stop", `{"name":"web"}`), nil)
	if !strings.Contains(out, "Stopped web.") || !strings.Contains(out, filepath.Join(b.ws, "served", ".git")) {
		t.Errorf("stop: %s", out)
	}

	b.mustRun(t, call("start", `{"name":"once","command":"make once"}`), nil)
	pgtest.Eventually(t, "once to exit", func() bool {
		out = b.mustRun(t, call("output", `{"name":"once"}`), nil)
		return strings.Contains(out, "once is exited")
	})
	if !strings.Contains(out, filepath.Join(b.ws, "once", ".git")) {
		t.Errorf("output after it exited: %s", out)
	}
}
