package runlist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testBundle is a real workspace in a temp dir, and the inputs that point at it.
type testBundle struct {
	// root is the temp dir; ws is the workspace inside it (root/ws), so that a directory
	// above the workspace exists to be reached for.
	root, ws string
	fs       FS
}

// setup builds the workspace:
//
//	root/node_modules/.bin/outside      (above the workspace: never counted)
//	ws/node_modules/.bin/vite
//	ws/app/src/                         (deep cwd, for npx's walk up)
//	ws/sibling/node_modules/.bin/tool   (not between app/src and the root)
//	ws/npm/package-lock.json  ws/shrink/npm-shrinkwrap.json  ws/pnpm/pnpm-lock.yaml
//	ws/yarn/yarn.lock  ws/bun/bun.lockb  ws/bun2/bun.lock  ws/nolock/
//	ws/npm/sub/                         (lockfile only in the parent)
func setup(t *testing.T) *testBundle {
	t.Helper()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	files := []string{
		"node_modules/.bin/outside",
		"ws/node_modules/.bin/vite",
		"ws/sibling/node_modules/.bin/tool",
		"ws/npm/package-lock.json",
		"ws/shrink/npm-shrinkwrap.json",
		"ws/pnpm/pnpm-lock.yaml",
		"ws/yarn/yarn.lock",
		"ws/bun/bun.lockb",
		"ws/bun2/bun.lock",
		"ws/README.md",
	}
	dirs := []string{"ws/app/src", "ws/nolock", "ws/npm/sub", "ws/pkg/pnpm-lock.yaml"}
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &testBundle{root: root, ws: ws, fs: DirFS(ws)}
}

// in returns a run-mode input for cmd at the workspace root.
func (b *testBundle) in(cmd string) Input {
	return Input{Command: cmd, Workspace: b.ws, Mode: ModeRun, Agent: "dev", FS: b.fs}
}

// decisionCase is one command and what it must get. Empty rule and flag are not checked.
type decisionCase struct {
	cmd  string
	want Kind
	rule Rule
	flag string
}

// check runs Decide and reports a mismatch, with the verdict for context.
func check(t *testing.T, in Input, c decisionCase) Verdict {
	t.Helper()
	v := Decide(in)
	if v.Kind != c.want {
		t.Errorf("%q: got %v (%s: %s), want %v", in.Command, v.Kind, v.Rule, v.Reason, c.want)
		return v
	}
	if c.rule != "" && v.Rule != c.rule {
		t.Errorf("%q: got rule %s (%s), want %s", in.Command, v.Rule, v.Reason, c.rule)
	}
	if c.flag != "" {
		if v.Flag != c.flag {
			t.Errorf("%q: got flag %q (%s), want %q", in.Command, v.Flag, v.Reason, c.flag)
		}
		if !strings.Contains(v.Reason, c.flag) {
			t.Errorf("%q: reason %q does not name the flag %q", in.Command, v.Reason, c.flag)
		}
	}
	if v.Kind != Auto && v.Program != "" && !strings.Contains(v.Reason, printable(v.Program)) {
		t.Errorf("%q: reason %q does not name the program %q", in.Command, v.Reason, v.Program)
	}
	if strings.Count(v.Reason, ". ") > 0 || strings.Contains(v.Reason, "\n") {
		t.Errorf("%q: reason %q is more than one sentence", in.Command, v.Reason)
	}
	return v
}
