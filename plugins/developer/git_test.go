package developer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"buddi/core/registry"
	"buddi/plugins"
	"buddi/plugins/developer/runlist"
)

func TestGit(t *testing.T) {
	b := setup(t)
	g := func(a map[string]any) plugins.Call { return call("git", args(t, a)) }

	// Not a repository yet: reads are refused, init is gated in every mode.
	if _, err := b.describe(t, g(map[string]any{"action": "status"})); err == nil {
		t.Error("git status outside a repository was described")
	}
	for _, m := range []runlist.Mode{runlist.ModeAsk, runlist.ModeEdit, runlist.ModeRun} {
		b.setMode(t, m)
		if got := b.tier(t, g(map[string]any{"action": "init"})); got != plugins.TierGated {
			t.Errorf("init in %s mode: %s, want gated", m, got)
		}
	}
	initCall := g(map[string]any{"action": "init"})
	b.mustRun(t, initCall, b.mustDescribe(t, initCall))
	if _, err := os.Stat(filepath.Join(b.ws, ".git")); err != nil {
		t.Fatal("git init made no repository")
	}
	if _, err := b.describe(t, g(map[string]any{"action": "init"})); err == nil {
		t.Error("init inside a repository was described, want a refusal")
	}

	// A hook the repository carries never runs.
	marker := filepath.Join(b.base, "hook-ran")
	writeFile(t, filepath.Join(b.ws, ".git", "hooks", "pre-commit"), "#!/bin/sh\ntouch "+marker+"\n")
	if err := os.Chmod(filepath.Join(b.ws, ".git", "hooks", "pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		mode   runlist.Mode
		action map[string]any
		want   plugins.Tier
	}{
		{runlist.ModeAsk, map[string]any{"action": "status"}, plugins.TierAuto},
		{runlist.ModeAsk, map[string]any{"action": "branch", "name": "feature"}, plugins.TierGated},
		{runlist.ModeEdit, map[string]any{"action": "branch", "name": "feature"}, plugins.TierAuto},
		{runlist.ModeEdit, map[string]any{"action": "commit", "message": "m"}, plugins.TierGated},
		{runlist.ModeRun, map[string]any{"action": "commit", "message": "m"}, plugins.TierAuto},
		{runlist.ModeAsk, map[string]any{"action": "stash"}, plugins.TierGated},
		{runlist.ModeRun, map[string]any{"action": "stash", "stash": "list"}, plugins.TierAuto},
	}
	for _, tt := range tests {
		b.setMode(t, tt.mode)
		if got := b.tier(t, g(tt.action)); got != tt.want {
			t.Errorf("%s mode, %v: %s, want %s", tt.mode, tt.action, got, tt.want)
		}
	}

	b.setMode(t, runlist.ModeRun)
	out := b.mustRun(t, g(map[string]any{"action": "commit", "message": "first"}), nil)
	if !strings.Contains(out, "exit 0") {
		t.Fatalf("commit: %s", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the repository's pre-commit hook ran")
	}
	if out := b.mustRun(t, g(map[string]any{"action": "log"}), nil); !strings.Contains(out, "first") {
		t.Errorf("log: %s", out)
	}
	if out := b.mustRun(t, g(map[string]any{"action": "branch", "name": "feature"}), nil); !strings.Contains(out, "exit 0") {
		t.Errorf("branch: %s", out)
	}
	if out := b.mustRun(t, g(map[string]any{"action": "status"}), nil); !strings.Contains(out, "feature") {
		t.Errorf("status after switch -c: %s", out)
	}

	// The summary: the branch, the diff stat against HEAD, and the last test run.
	writeFile(t, filepath.Join(b.ws, "a.txt"), "alpha\nbeta\ngamma\n")
	b.run(t, call("run", args(t, map[string]any{"command": "make test"})), nil) // no Makefile: fails, still a test run
	if got := b.tier(t, call("summarise", `{}`)); got != plugins.TierAuto {
		t.Errorf("summarise: %s, want auto", got)
	}
	out = b.mustRun(t, call("summarise", `{}`), nil)
	for _, want := range []string{"Branch: feature", "a.txt", "Last test run: make test", "not measurable"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// developer.failing_tests: not measurable without a test run or from a runner's output that
// does not say; the failing count read from the runner's own summary when it does.
func TestFailingTestsMetric(t *testing.T) {
	b := setup(t)
	m := Manifest(b.deps)
	reg, err := registry.New(m)
	if err != nil {
		t.Fatal(err)
	}
	b.reg = reg
	b.setMode(t, runlist.ModeRun)
	if len(m.Metrics) != 1 || m.Metrics[0].Name != "developer.failing_tests" || m.Metrics[0].Better != "down" {
		t.Fatalf("metrics: %+v", m.Metrics)
	}
	measure := func() plugins.Measurement {
		t.Helper()
		got, err := m.Metrics[0].Measure(context.Background(), agent)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := measure(); got.Known || !strings.Contains(got.Reason, "No test run") {
		t.Fatalf("before any run: %+v", got)
	}
	b.run(t, call("run", args(t, map[string]any{"command": "make test"})), nil) // no Makefile: says nothing
	if got := measure(); got.Known || got.Value != 0 {
		t.Fatalf("a run that did not say: %+v", got)
	}
	writeFile(t, filepath.Join(b.ws, "Makefile"), "test:\n\t@echo '======= 2 failed, 5 passed in 0.12s ======='\n\t@false\n")
	b.run(t, call("run", args(t, map[string]any{"command": "make test"})), nil)
	if got := measure(); !got.Known || got.Value != 2 {
		t.Fatalf("two failing: %+v", got)
	}
	if got, err := m.Metrics[0].Measure(context.Background(), "nobody"); err != nil || got.Known {
		t.Fatalf("an agent without a workspace: %+v %v", got, err)
	}
}

// The developer plugin's sentinel finds a workspace whose last test run has failing tests.
func TestFailingTestsSentinel(t *testing.T) {
	b := setup(t)
	m := Manifest(b.deps)
	reg, err := registry.New(m)
	if err != nil {
		t.Fatal(err)
	}
	b.reg = reg
	b.setMode(t, runlist.ModeRun)
	if len(m.Sentinels) != 1 {
		t.Fatalf("sentinels: %+v", m.Sentinels)
	}
	check := func() []plugins.Finding {
		t.Helper()
		fs, err := m.Sentinels[0].Check(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	if fs := check(); len(fs) != 0 {
		t.Fatalf("before a test run: %+v", fs)
	}
	writeFile(t, filepath.Join(b.ws, "Makefile"), "test:\n\t@echo '======= 3 failed, 5 passed in 0.12s ======='\n\t@false\n")
	b.run(t, call("run", args(t, map[string]any{"command": "make test"})), nil)
	fs := check()
	if len(fs) != 1 || fs[0].Key != "failing-tests:"+agent || !strings.Contains(fs[0].OwnerLine, "3 failing tests") {
		t.Fatalf("after a failing run: %+v", fs)
	}
	writeFile(t, filepath.Join(b.ws, "Makefile"), "test:\n\t@echo '======= 5 passed in 0.12s ======='\n")
	b.run(t, call("run", args(t, map[string]any{"command": "make test"})), nil)
	if fs := check(); len(fs) != 0 {
		t.Fatalf("after the tests pass: %+v", fs)
	}
}
