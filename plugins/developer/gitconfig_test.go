package developer

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"buddi/core/registry"
	"buddi/plugins"
	"buddi/plugins/developer/runlist"
)

// gitIn runs the test's own git in dir, with no configuration but the repository's and an
// identity, and fails the test if it fails.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "core.hooksPath=/dev/null"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// markerScript writes, in the workspace (where the agent writes), a script that leaves a
// marker named for its first argument in the test's base directory and passes its input
// through, and returns its path.
func (b *testBundle) markerScript(t *testing.T) string {
	t.Helper()
	script := filepath.Join(b.ws, "tools", "mark.sh")
	writeFile(t, script, "#!/bin/sh\ntouch "+b.base+"/marker-\"$1\"\ncat\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// markers lists the markers left so far.
func (b *testBundle) markers(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(b.base, "marker-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// appendConfig adds text to the repository's own configuration, as a repository cloned
// with it, or written by a command that could once reach .git, would have it.
func (b *testBundle) appendConfig(t *testing.T, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(b.ws, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// touchAll gives every file of the workspace a new modification time and the same
// content, so git has to read each one again (through its clean filter) to know whether it
// changed.
func (b *testBundle) touchAll(t *testing.T) {
	t.Helper()
	for _, f := range []string{"a.txt", "notes.md", "src/main.go"} {
		p := filepath.Join(b.ws, f)
		data := readFile(t, p)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		now := testNow.AddDate(1, 0, 0)
		if err := os.Chtimes(p, now, now); err != nil {
			t.Fatal(err)
		}
	}
}

// repoBundle is setup's workspace made a repository with one commit, and a marker script
// in it.
func repoBundle(t *testing.T) (*testBundle, string) {
	t.Helper()
	b := setup(t)
	for _, l := range []string{"link-in", "link-out", "link-file-out"} {
		if err := os.Remove(filepath.Join(b.ws, l)); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, b.ws, "init", "-q")
	gitIn(t, b.ws, "add", "-A")
	gitIn(t, b.ws, "commit", "-q", "-m", "first")
	return b, b.markerScript(t)
}

// TestGitRunsNoRepositoryCommand is issue 14 §4's developer.git finding and its class: the
// read actions (and a branch, and a stash list) run nothing the repository's configuration
// names — filter drivers (clean, smudge, process, required or not), external diffs and
// textconv, fsmonitor, hooks, pagers, submodules' own filters — in edit mode, with no card.
func TestGitRunsNoRepositoryCommand(t *testing.T) {
	t.Parallel()
	b, mark := repoBundle(t)
	// A submodule, committed as a gitlink, with its own filter in its own configuration.
	sub := filepath.Join(b.ws, "sub")
	writeFile(t, filepath.Join(sub, "s.txt"), "s\n")
	gitIn(t, sub, "init", "-q")
	gitIn(t, sub, "add", "-A")
	gitIn(t, sub, "commit", "-q", "-m", "s")
	gitIn(t, b.ws, "add", "sub")
	gitIn(t, b.ws, "commit", "-q", "-m", "with sub")
	writeFile(t, filepath.Join(sub, ".gitattributes"), "* filter=subevil\n")
	f, err := os.OpenFile(filepath.Join(sub, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[filter \"subevil\"]\n\tclean = " + mark + " sub-clean\n")
	f.Close()

	writeFile(t, filepath.Join(b.ws, ".gitattributes"), "a.txt filter=evil diff=evil\nnotes.md filter=proc\nsrc/* filter=req.dot\n")
	b.appendConfig(t, ""+
		"[filter \"evil\"]\n\tclean = "+mark+" clean\n\tsmudge = "+mark+" smudge\n"+
		"[filter \"proc\"]\n\tprocess = "+mark+" process\n"+
		"[filter \"req.dot\"]\n\tclean = "+mark+" required-clean\n\trequired = true\n"+
		"[diff \"evil\"]\n\ttextconv = "+mark+" textconv\n\tcommand = "+mark+" diff-command\n"+
		"[diff]\n\texternal = "+mark+" external\n"+
		"[core]\n\tfsmonitor = "+mark+" fsmonitor\n\tpager = "+mark+" pager\n"+
		"[pager]\n\tstatus = "+mark+" pager-status\n"+
		"[log]\n\tshowSignature = true\n"+
		"[gpg]\n\tprogram = "+mark+" gpg\n")

	b.setMode(t, runlist.ModeEdit)
	g := func(a map[string]any) plugins.Call { return call("git", args(t, a)) }
	for _, a := range []map[string]any{
		{"action": "status"},
		{"action": "diff"},
		{"action": "diff", "staged": true},
		{"action": "log"},
		{"action": "stash", "stash": "list"},
		{"action": "branch"},
		{"action": "branch", "name": "feature"},
	} {
		b.touchAll(t)
		writeFile(t, filepath.Join(sub, "s.txt"), "s\n")
		c := g(a)
		if got := b.tier(t, c); got != auto {
			t.Errorf("%v in edit mode: got %s, want auto", a, got)
		}
		out := b.run(t, c, nil)
		if out.Status != registry.StatusSucceeded {
			t.Errorf("%v: %s %q", a, out.Status, out.Result.Text)
		}
		if m := b.markers(t); len(m) > 0 {
			t.Fatalf("%v ran the repository's own commands: %q\n%s", a, m, out.Result.Text)
		}
	}
	// The summary's diff against HEAD is a read as well.
	b.touchAll(t)
	if out := b.mustRun(t, call("summarise", `{}`), nil); !strings.Contains(out, "Branch:") {
		t.Errorf("summarise:\n%s", out)
	}
	if m := b.markers(t); len(m) > 0 {
		t.Fatalf("summarise ran the repository's own commands: %q", m)
	}
}

// TestGitConfigFromTheWorkingTree: a repository whose configuration includes a file the
// agent can write is refused, and nothing it names runs.
func TestGitConfigFromTheWorkingTree(t *testing.T) {
	t.Parallel()
	b, mark := repoBundle(t)
	writeFile(t, filepath.Join(b.ws, "inc.cfg"), "[filter \"evil\"]\n\tclean = "+mark+" included\n")
	writeFile(t, filepath.Join(b.ws, ".gitattributes"), "* filter=evil\n")
	b.appendConfig(t, "[include]\n\tpath = ../inc.cfg\n")
	b.setMode(t, runlist.ModeEdit)
	b.touchAll(t)
	c := call("git", `{"action":"status"}`)
	_, err := b.describe(t, c)
	var ref *registry.Refusal
	if !errors.As(err, &ref) || !strings.Contains(ref.Reason, "inc.cfg") {
		t.Errorf("Describe got %v, want a refusal naming inc.cfg", err)
	}
	b.mustFail(t, c, nil, "inc.cfg")
	if m := b.markers(t); len(m) > 0 {
		t.Fatalf("the included configuration ran: %q", m)
	}
}

// TestGitWorkTreeIsTheWorkspace: core.worktree in the repository's configuration does not
// move git's working tree out of the workspace.
func TestGitWorkTreeIsTheWorkspace(t *testing.T) {
	t.Parallel()
	b, _ := repoBundle(t)
	writeFile(t, filepath.Join(b.outside, "elsewhere.txt"), "x\n")
	b.appendConfig(t, "[core]\n\tworktree = "+b.outside+"\n")
	b.setMode(t, runlist.ModeRun)
	out := b.mustRun(t, call("git", `{"action":"status"}`), nil)
	if strings.Contains(out, "elsewhere.txt") || strings.Contains(out, "secret.txt") {
		t.Errorf("status looked at the directory core.worktree names:\n%s", out)
	}
	b.mustRun(t, call("git", `{"action":"stash"}`), nil)
	if _, err := os.Stat(filepath.Join(b.outside, "elsewhere.txt")); err != nil {
		t.Errorf("stash push reached outside the workspace: %v", err)
	}
}

// TestGitStashPushGatedLikeCommit: a stash push runs the repository's own filters, so it is
// gated outside run mode, as a commit is; listing stashes is auto.
func TestGitStashPushGatedLikeCommit(t *testing.T) {
	t.Parallel()
	b, _ := repoBundle(t)
	for _, tt := range []struct {
		mode runlist.Mode
		push plugins.Tier
	}{{runlist.ModeAsk, gated}, {runlist.ModeEdit, gated}, {runlist.ModeRun, auto}} {
		b.setMode(t, tt.mode)
		for _, a := range []string{`{"action":"stash"}`, `{"action":"stash","stash":"push"}`} {
			if got := b.tier(t, call("git", a)); got != tt.push {
				t.Errorf("%s mode, %s: got %s, want %s", tt.mode, a, got, tt.push)
			}
		}
		if got := b.tier(t, call("git", `{"action":"stash","stash":"list"}`)); got != auto {
			t.Errorf("%s mode, stash list: got %s, want auto", tt.mode, got)
		}
	}
	b.setMode(t, runlist.ModeEdit)
	b.mustFail(t, call("git", `{"action":"stash"}`), nil, "needs the owner's approval")
	env := b.mustDescribe(t, call("git", `{"action":"stash"}`))
	if !strings.Contains(env.Preview, "filters") {
		t.Errorf("the card does not say the repository's filters run:\n%s", env.Preview)
	}
}
