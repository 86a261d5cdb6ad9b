package developer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"buddi/core/registry"
	"buddi/plugins"
	"buddi/plugins/developer/runlist"
)

// linkBundle is setup's workspace with the links of issue 14 §4 in it:
//
//	ws/home     ->  the owner's home, which holds .ssh/id_ed25519 and .bashrc
//	ws/etc      ->  /etc
//	ws/sshdir   ->  the owner's ~/.ssh
//	ws/other    ->  another project, whose Makefile and scripts leave a marker
//	ws/dangling ->  a path that does not exist
//	ws/d1/key   ->  the owner's key, below a real directory (d2/key is empty)
//	ws/d1/sub   ->  another real directory, for diff -r (d2/sub/key is empty)
type linkBundle struct {
	*testBundle
	other  string // the other project
	marker string // what the other project's code creates when it runs
}

func setupLinks(t *testing.T) *linkBundle {
	t.Helper()
	b := &linkBundle{testBundle: setup(t)}
	b.other = filepath.Join(b.base, "other")
	b.marker = filepath.Join(b.base, "other-ran")
	writeFile(t, filepath.Join(b.home, ".ssh", "id_ed25519"), "PRIVATE KEY\n")
	writeFile(t, filepath.Join(b.home, ".bashrc"), "# the owner's profile\n")
	writeFile(t, filepath.Join(b.home, "notes", "x.py"), "print('x')\n")
	writeFile(t, filepath.Join(b.other, "Makefile"), "all:\n\ttouch "+b.marker+"\n")
	writeFile(t, filepath.Join(b.other, "x.js"), "require('fs').writeFileSync('"+b.marker+"', '')\n")
	writeFile(t, filepath.Join(b.other, "tsconfig.json"), "{}\n")
	symlink(t, b.home, filepath.Join(b.ws, "home"))
	symlink(t, "/etc", filepath.Join(b.ws, "etc"))
	symlink(t, filepath.Join(b.home, ".ssh"), filepath.Join(b.ws, "sshdir"))
	symlink(t, b.other, filepath.Join(b.ws, "other"))
	symlink(t, filepath.Join(b.base, "nowhere", "x"), filepath.Join(b.ws, "dangling"))
	symlink(t, filepath.Join(b.home, ".ssh", "id_ed25519"), filepath.Join(b.ws, "d1", "key"))
	writeFile(t, filepath.Join(b.ws, "d2", "key"), "")
	symlink(t, filepath.Join(b.home, ".ssh"), filepath.Join(b.ws, "d1", "sub", "s"))
	writeFile(t, filepath.Join(b.ws, "d2", "sub", "s", "id_ed25519"), "")
	writeFile(t, filepath.Join(b.ws, "flat1", "a"), "a\n")
	writeFile(t, filepath.Join(b.ws, "flat2", "a"), "b\n")
	b.setMode(t, runlist.ModeRun)
	return b
}

// runRefused checks that the command, in cwd, is refused at every step in every mode: gated
// by TierFor, refused by Describe with a sentence saying want, failed by Execute with or
// without an envelope.
func (b *linkBundle) runRefused(t *testing.T, command, cwd, want string) {
	t.Helper()
	a := map[string]any{"command": command}
	if cwd != "" {
		a["cwd"] = cwd
	}
	c := call("run", args(t, a))
	for _, mode := range []runlist.Mode{runlist.ModeRun, runlist.ModeEdit, runlist.ModeAsk} {
		b.setMode(t, mode)
		if got := b.tier(t, c); got != gated {
			t.Errorf("%s mode, %q in %q: got %s, want gated", mode, command, cwd, got)
		}
		_, err := b.describe(t, c)
		var ref *registry.Refusal
		if !errors.As(err, &ref) || !strings.Contains(ref.Reason, want) {
			t.Errorf("%s mode, %q in %q: Describe got %v, want a refusal saying %q", mode, command, cwd, err, want)
		}
		out := b.run(t, c, &plugins.Envelope{Summary: "forged"})
		if out.Status == registry.StatusSucceeded || !strings.Contains(out.Result.Text, want) {
			t.Errorf("%s mode, %q in %q: Execute with an envelope got %s %q, want a refusal saying %q", mode, command, cwd, out.Status, out.Result.Text, want)
		}
		if strings.Contains(out.Result.Text, "PRIVATE KEY") || strings.Contains(out.Result.Text, "root:") {
			t.Fatalf("%q: the output reached the model:\n%s", command, out.Result.Text)
		}
	}
	b.setMode(t, runlist.ModeRun)
}

// TestRunFollowsNoLink is issue 14 §4's first finding and its class: with links in the
// workspace, every path operand, every path-valued flag and the cwd are resolved through
// the confinement before anything is spawned, in every mode.
func TestRunFollowsNoLink(t *testing.T) {
	t.Parallel()
	b := setupLinks(t)
	const link = "symbolic link"
	for _, tt := range []struct{ command, cwd, want string }{
		// The issue's own.
		{"cat home/.ssh/id_ed25519", "", link},
		{"head -n 1 etc/shadow", "", link},
		{"cat sshdir/id_ed25519", "", link},
		{"make", "other", link},
		{"uniq a.txt home/.bashrc", "", link},
		// The class: every program of the table that takes a path.
		{"uniq home/.bashrc", "", link},
		{"tail -n 1 home/.bashrc", "", link},
		{"wc -l home/.bashrc", "", link},
		{"sort home/.bashrc", "", link},
		{"ls -l home", "", link},
		{"ls sshdir", "", link},
		{"grep -r KEY home", "", link},
		{"grep -n KEY a.txt sshdir/id_ed25519", "", link},
		{"rg KEY sshdir", "", link},
		{"find home -name id_ed25519", "", link},
		{"find . -newer home/.bashrc", "", link},
		{"diff -u a.txt home/.bashrc", "", link},
		{"tsc -p other/tsconfig.json", "", link},
		{"tsc --project=other", "", link},
		{"node other/x.js", "", link},
		{"node --test other", "", link},
		{"python3 home/notes/x.py", "", link},
		{"python3 -m pytest other", "", link},
		{"pytest -q home/notes", "", link},
		{"go test ./other/...", "", link},
		{"go vet other", "", link},
		{"vitest run other", "", link},
		{"jest other", "", link},
		{"eslint other", "", link},
		{"prettier --check other/x.js", "", link},
		{"ruff check other", "", link},
		{"black --check home/notes", "", link},
		{"mypy home/notes", "", link},
		// Operands the grammar reads as names and the program reads as paths.
		{"python3 -m unittest home.notes.x", "", link},
		{"python3 -m pytest -p other", "", link},
		// A path through a link that goes on to a file that does not exist yet, and a
		// dangling link.
		{"prettier --write other/new.js", "", link},
		{"cat dangling", "", link},
		{"cat dangling/x", "", link},
		// A link spelled with .. or from a cwd.
		{"cat src/../home/.bashrc", "", link},
		{"cat ../home/.bashrc", "src", link},
		{"cat ../ws/home/.bashrc", "", link},
		{"cat " + filepath.Join(b.ws, "home", ".bashrc"), "", link},
		// diff reads the entries of a directory operand, following links: one level, and all
		// of them with -r.
		{"diff -u d1 d2", "", link},
		{"diff -ru d1 d2", "", link},
		{"diff -u d2 d1/key", "", link},
		// The cwd, through a link, however it is spelled.
		{"ls", "home", link},
		{"make", "other", link},
		{"ls", "src/../other", link},
		{"ls", "dangling", link},
		{"cat .bashrc", "home", link},
		// Commands that are not on the run list, or flags that are not, get a card today;
		// through a link they are refused rather than shown as a path inside the workspace.
		{"cat -n home/.bashrc", "", link},
		{"vim home/.bashrc", "", link},
		{"cp a.txt home/.bashrc", "", link},
		{"tee --append=home/.bashrc", "", link},
		{"sort -o home/.bashrc a.txt", "", link},
		{"sort -ohome/.bashrc a.txt", "", link},
	} {
		b.runRefused(t, tt.command, tt.cwd, tt.want)
	}
	if _, err := os.Stat(b.marker); err == nil {
		t.Error("the other project's code ran")
	}
	if got := readFile(t, filepath.Join(b.home, ".bashrc")); got != "# the owner's profile\n" {
		t.Errorf("the owner's profile is now %q", got)
	}
	absent(t, filepath.Join(b.other, "new.js"))
}

// TestRunLinksStillAllowed: what is not a path is not resolved, and a workspace with links
// in it still runs what does not go through them.
func TestRunLinksStillAllowed(t *testing.T) {
	t.Parallel()
	b := setupLinks(t)
	for _, command := range []string{
		"cat a.txt", "ls -l", "ls -la src", "grep -rn needle .", "grep home a.txt", "echo home",
		"find . -name home", "diff -u flat1 flat2", "diff -ru src src", "wc -l a.txt notes.md",
		"make home", "npm run home", "which home", "uniq a.txt",
	} {
		if got := b.tier(t, call("run", args(t, map[string]any{"command": command}))); got != auto {
			t.Errorf("%q: got %s, want auto", command, got)
		}
	}
	out := b.mustRun(t, call("run", args(t, map[string]any{"command": "ls -l"})), nil)
	if !strings.Contains(out, "home ->") {
		t.Errorf("ls -l lists the links as links:\n%s", out)
	}
}

// TestRunRememberedFollowsNoLink: a command the owner allowed by its beginning is still not
// a way through a link.
func TestRunRememberedFollowsNoLink(t *testing.T) {
	t.Parallel()
	b := setupLinks(t)
	if _, err := b.store.Remember(context.Background(), runlist.Remembered{Agent: agent, Workspace: b.ws, Argv: []string{"cp"}, Prefix: true}); err != nil {
		t.Fatal(err)
	}
	if got := b.tier(t, call("run", args(t, map[string]any{"command": "cp a.txt copy.txt"}))); got != auto {
		t.Fatalf("the remembered cp: got %s, want auto", got)
	}
	b.runRefused(t, "cp a.txt home/.bashrc", "", "symbolic link")
}

// TestRunUniqWritesNothing: uniq's second operand is its output file, so the run list takes
// one operand; a second one asks, and the file it names is untouched.
func TestRunUniqWritesNothing(t *testing.T) {
	t.Parallel()
	b := setupLinks(t)
	mkdir(t, filepath.Join(b.ws, ".git", "info"))
	c := call("run", args(t, map[string]any{"command": "uniq a.txt .git/info/attributes"}))
	if got := b.tier(t, c); got != gated {
		t.Errorf("uniq with an output operand: got %s, want gated", got)
	}
	b.mustFail(t, c, nil, "needs the owner's approval")
	absent(t, filepath.Join(b.ws, ".git", "info", "attributes"))
}

// TestStartFollowsNoLink: developer.start goes through the same run list and the same
// resolution: a long-lived process is never started through a link.
func TestStartFollowsNoLink(t *testing.T) {
	t.Parallel()
	b := setupLinks(t)
	for _, a := range []map[string]any{
		{"name": "web", "command": "node x.js", "cwd": "other"},
		{"name": "web", "command": "node other/x.js"},
		{"name": "web", "command": "python3 -m unittest home.notes.x"},
		{"name": "web", "command": "tail -n 1 home/.bashrc"},
	} {
		b.refused(t, call("start", args(t, a)), "symbolic link")
	}
	if _, err := os.Stat(b.marker); err == nil {
		t.Error("the other project's code ran")
	}
}
