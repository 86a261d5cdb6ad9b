//go:build linux

package sandbox

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// launchShell runs sh -c script in the box through Launch, waits for it, finishes the box
// and returns the output, the exit code and the report.
func launchShell(t *testing.T, p Policy, dir, script string) (string, int, Report) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"},
		Dir: dir, Stdout: w, Stderr: w}
	l, err := Launch(cmd, p)
	_ = w.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(r)
	_ = cmd.Wait()
	return string(out), cmd.ProcessState.ExitCode(), l.Finish()
}

// needGit skips a test on a machine without git.
func needGit(t *testing.T) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on this machine")
	}
	return git
}

// ownersGit runs git as the owner would outside any box (their shell prompt's `git status`)
// in dir, with no configuration of theirs, and reports whether marker was made: the
// fsmonitor a planted repository names writes it.
func ownersGit(t *testing.T, git, dir, marker string) bool {
	t.Helper()
	cmd := exec.Command(git, "status", "--short")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir)}
	_, _ = cmd.CombinedOutput()
	_, err := os.Stat(marker)
	return err == nil
}

// plant is a script that makes, in the current directory, a repository whose config runs
// "touch MARKER" whenever git looks at it (core.fsmonitor), in each way git finds one: a
// .git directory, a .git file pointing at a git directory elsewhere in the workspace, a .git
// link to one, and a bare repository, in a node_modules package too; and a hooks directory.
func plant(marker string) string {
	repo := func(dir string) string {
		return "mkdir -p " + dir + "/objects " + dir + "/refs && echo 'ref: refs/heads/main' > " + dir + "/HEAD && " +
			"printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = ..\\n\\tfsmonitor = \"touch " + marker + "; false\"\\n' > " + dir + "/config"
	}
	return strings.Join([]string{
		repo("sub/.git"),
		repo("node_modules/pkg/.git"),
		repo("store/evil.git"),
		"mkdir -p byfile && echo 'gitdir: ../store/evil.git' > byfile/.git",
		"mkdir -p bylink && ln -s ../store/evil.git bylink/.git",
		"mkdir -p .husky && echo 'touch " + marker + "' > .husky/pre-commit",
		"echo planted",
	}, " && ")
}

// TestBoxQuarantinesPlantedRepositories: a boxed command plants repositories whose config
// runs a command when git looks at them, in every way git finds one. Unboxed, the control,
// the owner's `git status` in each runs it; after the box ends, each was moved aside (and
// reported), and the owner's git runs nothing.
func TestBoxQuarantinesPlantedRepositories(t *testing.T) {
	t.Parallel()
	needBox(t)
	git := needGit(t)
	places := []string{"sub", "node_modules/pkg", "byfile", "bylink", "store/evil.git"}

	control := newTree(t)
	marker := control.root + "/ran"
	cmd := exec.Command("/bin/sh", "-c", plant(marker))
	cmd.Dir = control.ws
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("planting unboxed: %v %s", err, out)
	}
	for _, place := range places {
		_ = os.Remove(marker)
		if !ownersGit(t, git, filepath.Join(control.ws, place), marker) {
			t.Errorf("unboxed control: git in %s ran nothing: the test does not show the hole", place)
		}
	}

	tr := newTree(t)
	marker = tr.root + "/ran"
	p := Policy{Home: tr.home, Workspace: tr.ws, ReadOnly: []string{tr.ws + "/.husky"}}
	out, code, rep := launchShell(t, p, tr.ws, plant(marker))
	if code != 0 || !strings.Contains(out, "planted") {
		t.Fatalf("planting in the box: exit %d: %s", code, out)
	}
	t.Logf("report: %s", rep)
	want := map[string]string{
		tr.ws + "/sub/.git": "a .git directory", tr.ws + "/node_modules/pkg/.git": "a .git directory",
		tr.ws + "/byfile/.git": "a .git file", tr.ws + "/bylink/.git": "a .git link",
		tr.ws + "/store/evil.git": "a bare repository (its HEAD renamed)", tr.ws + "/.husky": "a hooks directory",
	}
	for _, q := range rep.Quarantined {
		if want[q.Path] != q.What || q.Moved == "" || !strings.Contains(q.Moved, ".quarantined-by-buddi-") {
			t.Errorf("quarantined %+v, want %q moved aside", q, want[q.Path])
		}
		delete(want, q.Path)
	}
	for path, what := range want {
		t.Errorf("%s (%s) was not quarantined", path, what)
	}
	if rep.Unchecked != "" || !strings.Contains(rep.String(), "moved it to") {
		t.Errorf("report: %+v", rep)
	}
	for _, place := range places {
		if ownersGit(t, git, filepath.Join(tr.ws, place), marker) {
			t.Errorf("after the box, git in %s ran the planted command", place)
		}
	}
	if _, err := os.Lstat(tr.ws + "/.git"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the workspace's .git placeholder is still there: %v", err)
	}
}

// TestBoxCannotMakeTheWorkspacesRepository: in a workspace with no .git, a boxed command
// cannot make one (git init, mkdir, a .git file), while another box of the same workspace
// runs too; the placeholder that keeps it from doing so is gone once the last box has
// ended, and nothing is left in the workspace.
func TestBoxCannotMakeTheWorkspacesRepository(t *testing.T) {
	t.Parallel()
	needBox(t)
	tr := newTree(t)
	p := Policy{Home: tr.home, Workspace: tr.ws}

	// A first box that stays until its stdin closes.
	in, feed, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	long := &exec.Cmd{Path: "/bin/cat", Args: []string{"cat"}, Dir: tr.ws, Stdin: in}
	first, err := Launch(long, p)
	_ = in.Close()
	if err != nil {
		t.Fatal(err)
	}
	script := `git init -q . 2>/dev/null && echo git-init; mkdir .git/hooks 2>/dev/null && echo mkdir-hooks;
echo x > .git/config 2>/dev/null && echo wrote-config; rmdir .git 2>/dev/null && echo removed;
mv .git moved 2>/dev/null && echo moved; ls -a | tr '\n' ' '`
	out, _, rep := launchShell(t, p, tr.ws, script)
	for _, bad := range []string{"git-init", "mkdir-hooks", "wrote-config", "removed", "moved"} {
		if strings.Contains(out, bad) {
			t.Errorf("the box could %s: %s", bad, out)
		}
	}
	if !rep.Empty() {
		t.Errorf("report: %s", rep)
	}
	if fi, err := os.Lstat(tr.ws + "/.git"); err != nil || !fi.IsDir() {
		t.Errorf("with the first box still running, .git is %v, %v: want the placeholder", fi, err)
	}
	_ = feed.Close()
	_ = long.Wait()
	if rep := first.Finish(); !rep.Empty() {
		t.Errorf("report: %s", rep)
	}
	entries, err := os.ReadDir(tr.ws)
	if err != nil || len(entries) != 0 {
		t.Errorf("the workspace holds %v after the boxes, want nothing", entries)
	}
}

// TestBoxKeepsExistingRepositoriesReadOnly: the repositories a workspace holds when the box
// is made (a nested .git directory, a .git file and the git directory it names, a bare
// repository) are read-only in it, and nothing of them is quarantined at its end.
func TestBoxKeepsExistingRepositoriesReadOnly(t *testing.T) {
	t.Parallel()
	needBox(t)
	tr := newTree(t)
	for _, d := range []string{"sub/.git", "repos/mod.git/objects", "repos/mod.git/refs", "mod", "bare.git/objects", "bare.git/refs"} {
		if err := os.MkdirAll(filepath.Join(tr.ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{
		"sub/.git/config": "[core]\n", "repos/mod.git/HEAD": "ref: refs/heads/main\n", "repos/mod.git/config": "[core]\n",
		"mod/.git": "gitdir: ../repos/mod.git\n", "bare.git/HEAD": "ref: refs/heads/main\n", "bare.git/config": "[core]\n",
	} {
		if err := os.WriteFile(filepath.Join(tr.ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := `for f in sub/.git/config mod/.git repos/mod.git/config bare.git/config; do echo evil >> $f 2>/dev/null && echo wrote $f; done
mkdir sub/.git/hooks 2>/dev/null && echo made-hooks; mv sub/.git sub/gone 2>/dev/null && echo moved-sub; echo done`
	out, code, rep := launchShell(t, Policy{Home: tr.home, Workspace: tr.ws}, tr.ws, script)
	if code != 0 || strings.Contains(out, "wrote") || strings.Contains(out, "made-hooks") || strings.Contains(out, "moved") || !strings.Contains(out, "done") {
		t.Errorf("exit %d: %s", code, out)
	}
	if !rep.Empty() {
		t.Errorf("report: %s", rep)
	}
	if b, _ := os.ReadFile(filepath.Join(tr.ws, "mod/.git")); string(b) != "gitdir: ../repos/mod.git\n" {
		t.Errorf("mod/.git is now %q", b)
	}
}

// TestStartFinishesTheBoxItself: Start, for callers that read no report, still ends the box's
// hold on its workspace once the program has exited (the placeholder goes), and a planted
// repository is still quarantined.
func TestStartFinishesTheBoxItself(t *testing.T) {
	t.Parallel()
	needBox(t)
	tr := newTree(t)
	cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", "mkdir -p sub/.git"}, Dir: tr.ws}
	if err := Start(cmd, Policy{Home: tr.home, Workspace: tr.ws}); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, errGit := os.Lstat(tr.ws + "/.git")
		_, errSub := os.Lstat(tr.ws + "/sub/.git")
		if errors.Is(errGit, os.ErrNotExist) && errors.Is(errSub, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the program exited: .git %v, sub/.git %v; want both gone", errGit, errSub)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
