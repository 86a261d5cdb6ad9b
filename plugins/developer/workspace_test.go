package developer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"buddi/core/registry"
)

// workspaceCall is developer.workspace for dir.
func workspaceCall(dir string) string { return `{"directory":"` + dir + `"}` }

// mkrepo makes dir the root of something git takes for a repository.
func mkrepo(t *testing.T, dir string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
	mkdir(t, filepath.Join(dir, ".git", "objects"))
	mkdir(t, filepath.Join(dir, ".git", "refs"))
}

// TestWorkspaceCard: the card names the directory and what it holds (§2).
func TestWorkspaceCard(t *testing.T) {
	t.Parallel()
	b := setup(t)

	repo := filepath.Join(b.base, "repo")
	mkrepo(t, repo)
	writeFile(t, filepath.Join(repo, "go.mod"), "module x\n")
	writeFile(t, filepath.Join(repo, "cmd", "main.go"), "package main\n")

	folder := filepath.Join(b.base, "code")
	mkrepo(t, filepath.Join(folder, "api"))
	writeFile(t, filepath.Join(folder, "web", ".git"), "gitdir: ../.worktrees/web\n")
	mkdir(t, filepath.Join(folder, "scratch"))
	writeFile(t, filepath.Join(folder, "notes.txt"), "x")
	symlink(t, "/etc", filepath.Join(folder, "etc"))

	inside := filepath.Join(repo, "cmd")
	plain := filepath.Join(b.base, "plain")
	mkdir(t, plain)
	symlink(t, repo, filepath.Join(b.base, "repo-link"))

	tests := []struct {
		name, dir string
		says      []string
	}{
		{"a repository", repo, []string{
			"Workspace for agent dev: " + repo,
			"It is the root of a git repository.",
			"It holds 3 entries at its top level: 2 directories, 1 file.",
			"It replaces the current workspace " + b.ws + "; commands remembered there do not carry over.",
			"The agent's mode is run",
			WorkspaceSafety,
			"Why a card: " + reasonWorkspace,
		}},
		{"a folder of projects", folder, []string{
			"It is a folder of 2 projects (git repositories: api/, web/). Reads, edits and searches work across them; the git tools refuse here",
			"It holds 4 entries at its top level: 3 directories, 1 file.",
			"It has 1 symbolic link at its top level, which the tools step over and never follow.",
		}},
		{"inside a repository", inside, []string{"it is inside the repository at " + repo}},
		{"a plain folder", plain, []string{"It is not a git repository.", "It holds 0 entries"}},
		{"through a link", filepath.Join(b.base, "repo-link"), []string{
			"Workspace for agent dev: " + repo,
			"(named as " + filepath.Join(b.base, "repo-link") + ", which resolves there)",
		}},
		{"the current one", b.ws, []string{"Workspace for agent dev: " + b.ws}},
	}
	for _, tt := range tests {
		c := call("workspace", workspaceCall(tt.dir))
		if got := b.tier(t, c); got != gated {
			t.Errorf("%s: got %s, want gated", tt.name, got)
		}
		env := b.mustDescribe(t, c)
		for _, s := range tt.says {
			if !strings.Contains(env.Preview, s) {
				t.Errorf("%s: the card does not say %q:\n%s", tt.name, s, env.Preview)
			}
		}
		if tt.dir == b.ws && strings.Contains(env.Preview, "replaces") {
			t.Errorf("%s: the card says it replaces itself:\n%s", tt.name, env.Preview)
		}
		if env.Summary == "" || len(env.Targets) != 1 {
			t.Errorf("%s: got %+v", tt.name, env)
		}
	}
}

// TestWorkspaceRefusals: the protected paths of §2, buddi's data directory, and anything
// that is not an existing directory are refused before a card exists.
func TestWorkspaceRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	mkdir(t, filepath.Join(b.home, ".ssh", "keys"))
	mkdir(t, filepath.Join(b.home, ".config", "gh"))
	mkdir(t, filepath.Join(b.data, "developer"))
	writeFile(t, filepath.Join(b.base, "file"), "x")
	for _, tt := range []struct{ dir, want string }{
		{filepath.Join(b.home, ".ssh"), "~/.ssh"},
		{filepath.Join(b.home, ".ssh", "keys"), "~/.ssh"},
		{filepath.Join(b.home, ".config", "gh"), "~/.config/gh"},
		{filepath.Join(b.home, ".buddi"), "no such file"},
		{b.data, b.data},
		{filepath.Join(b.data, "developer"), b.data},
		{filepath.Join(b.base, "missing"), "no such file"},
		{filepath.Join(b.base, "file"), "not a directory"},
	} {
		c := call("workspace", workspaceCall(tt.dir))
		if _, err := b.describe(t, c); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Describe got %v, want a refusal naming %q", tt.dir, err, tt.want)
		}
	}
	mkdir(t, filepath.Join(b.home, ".buddi"))
	if _, err := b.describe(t, call("workspace", workspaceCall(filepath.Join(b.home, ".buddi")))); err == nil || !strings.Contains(err.Error(), "~/.buddi") {
		t.Errorf("~/.buddi: got %v", err)
	}
	if _, err := b.reg.Resolve(context.Background(), call("workspace", `{"directory":"relative/dir"}`), testNow); !errors.Is(err, registry.CodeInvalidArguments) {
		t.Errorf("a relative directory: got %v, want invalid arguments", err)
	}
}

// TestWorkspaceAtHome: the home itself may be a workspace; the card lists the protected
// paths inside it, which stay refused.
func TestWorkspaceAtHome(t *testing.T) {
	t.Parallel()
	b := setup(t)
	mkdir(t, filepath.Join(b.home, ".ssh"))
	writeFile(t, filepath.Join(b.home, ".bashrc"), "x")
	mkdir(t, filepath.Join(b.home, "code"))
	env := b.mustDescribe(t, call("workspace", workspaceCall(b.home)))
	for _, s := range []string{
		"Protected paths inside it stay refused to every tool: ~/.bashrc, ~/.ssh.",
		"It holds 1 entry at its top level: 1 directory, 0 files.",
	} {
		if !strings.Contains(env.Preview, s) {
			t.Errorf("the card does not say %q:\n%s", s, env.Preview)
		}
	}
}

// TestWorkspaceExecute: only an approved card sets the workspace, and only for the
// directory the card named.
func TestWorkspaceExecute(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a, other := filepath.Join(b.base, "a"), filepath.Join(b.base, "b")
	mkdir(t, a)
	mkdir(t, other)
	link := filepath.Join(b.base, "current")
	symlink(t, a, link)
	c := call("workspace", workspaceCall(link))

	b.mustFail(t, c, nil, "needs the owner's approval")
	env := b.mustDescribe(t, c)

	// The link is moved while the owner decides: the card named a, not b.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	symlink(t, other, link)
	b.mustFail(t, c, env, "not the "+a+" the owner approved")
	if ws, _, _ := b.store.Workspace(context.Background(), agent); ws.Directory != b.ws {
		t.Errorf("the workspace is now %s", ws.Directory)
	}

	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	symlink(t, a, link)
	text := b.mustRun(t, c, env)
	ws, ok, err := b.store.Workspace(context.Background(), agent)
	if err != nil || !ok || ws.Directory != a || ws.SetBy != "approval" || !ws.SetAt.Equal(testNow) {
		t.Errorf("got %+v, %v, %v", ws, ok, err)
	}
	if !strings.Contains(text, "is now "+a) {
		t.Errorf("got %q", text)
	}
	// The tools now work in a: a.txt of the old workspace is not there.
	b.mustFail(t, call("read", `{"path":"a.txt"}`), nil, "does not exist")
}
