package developer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"buddi/plugins"
	"buddi/plugins/developer/runlist"
)

// TestAskModeHashRefusal: in ask mode the card carries a hash of what its diff was computed
// against, and a file that changed while the owner decided is refused, not overwritten.
func TestAskModeHashRefusal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setMode(t, runlist.ModeAsk)
	a := filepath.Join(b.ws, "a.txt")

	t.Run("edit of a file that changed", func(t *testing.T) {
		writeFile(t, a, "alpha\nbeta\n")
		edit := call("edit", `{"path":"a.txt","old":"alpha","new":"ALPHA"}`)
		if got := b.tier(t, edit); got != gated {
			t.Fatalf("got %s, want gated", got)
		}
		env := b.mustDescribe(t, edit)
		base := contentHash([]byte("alpha\nbeta\n"), true)
		if got, _ := precondition(env, preconditionBefore); got != base {
			t.Errorf("precondition %q, want %q", got, base)
		}
		for _, want := range []string{base, "-alpha", "+ALPHA", " beta", "Rule: " + reasonAskWrite, "+1 −1 lines"} {
			if !strings.Contains(env.Preview, want) {
				t.Errorf("the card does not show %q:\n%s", want, env.Preview)
			}
		}
		if env.Detail["before"] != base {
			t.Errorf("detail before = %v, want %s", env.Detail["before"], base)
		}
		writeFile(t, a, "alpha\nbeta\ngamma\n") // someone else's change, while the card waits
		b.mustFail(t, edit, env, "changed since the card was shown")
		if got := readFile(t, a); got != "alpha\nbeta\ngamma\n" {
			t.Errorf("a.txt is now %q", got)
		}
		// Described again, the card differs, so the executor's hash check refuses it too.
		if again := b.mustDescribe(t, edit); again.Preview == env.Preview {
			t.Error("the card did not change with the file")
		}
	})
	t.Run("write of a file that changed", func(t *testing.T) {
		writeFile(t, a, "one\n")
		write := call("write", `{"path":"a.txt","content":"two\n"}`)
		env := b.mustDescribe(t, write)
		writeFile(t, a, "three\n")
		b.mustFail(t, write, env, "changed since the card was shown")
		if got := readFile(t, a); got != "three\n" {
			t.Errorf("a.txt is now %q", got)
		}
	})
	t.Run("write of a file that appeared", func(t *testing.T) {
		write := call("write", `{"path":"appeared.txt","content":"mine\n"}`)
		env := b.mustDescribe(t, write)
		if got, _ := precondition(env, preconditionBefore); got != "absent" {
			t.Errorf("precondition %q, want absent", got)
		}
		writeFile(t, filepath.Join(b.ws, "appeared.txt"), "theirs\n")
		b.mustFail(t, write, env, "changed since the card was shown")
		if got := readFile(t, filepath.Join(b.ws, "appeared.txt")); got != "theirs\n" {
			t.Errorf("appeared.txt is now %q", got)
		}
	})
	t.Run("approved and unchanged", func(t *testing.T) {
		writeFile(t, a, "alpha\nbeta\n")
		edit := call("edit", `{"path":"a.txt","old":"alpha","new":"ALPHA"}`)
		env := b.mustDescribe(t, edit)
		b.mustRun(t, edit, env)
		if got := readFile(t, a); got != "ALPHA\nbeta\n" {
			t.Errorf("a.txt is now %q", got)
		}
	})
	t.Run("never without a card", func(t *testing.T) {
		writeFile(t, a, "alpha\n")
		b.mustFail(t, call("edit", `{"path":"a.txt","old":"alpha","new":"x"}`), nil, "needs the owner's approval")
		b.mustFail(t, call("write", `{"path":"a.txt","content":"x"}`), nil, "needs the owner's approval")
		if got := readFile(t, a); got != "alpha\n" {
			t.Errorf("a.txt is now %q", got)
		}
	})
	t.Run("a card without the hash", func(t *testing.T) {
		writeFile(t, a, "alpha\n")
		b.mustFail(t, call("write", `{"path":"a.txt","content":"x"}`), &plugins.Envelope{Summary: "forged"}, "carries no hash")
	})
}

// TestGitDirNeverWritten: .git is refused in every mode, before a card exists and at
// execution, whatever envelope is offered.
func TestGitDirNeverWritten(t *testing.T) {
	t.Parallel()
	b := setup(t)
	writeFile(t, filepath.Join(b.ws, ".git", "HEAD"), "ref: refs/heads/main\n")
	forged := &plugins.Envelope{Preconditions: []plugins.Precondition{{What: preconditionBefore, Value: "absent"}}}
	cases := []plugins.Call{
		call("write", `{"path":".git/config","content":"[core]\n\thooksPath = /tmp\n"}`),
		call("write", `{"path":".git/hooks/pre-commit","content":"#!/bin/sh\n"}`),
		call("write", `{"path":"sub/.git/hooks/x","content":"x"}`),
		call("write", `{"path":".Git/config","content":"x"}`),
		call("edit", `{"path":".git/HEAD","old":"main","new":"evil"}`),
	}
	for _, mode := range []runlist.Mode{runlist.ModeAsk, runlist.ModeEdit, runlist.ModeRun} {
		b.setMode(t, mode)
		for _, c := range cases {
			if got := b.tier(t, c); got != gated {
				t.Errorf("%s %s: got %s, want gated", mode, c.Args, got)
			}
			if _, err := b.describe(t, c); err == nil || !strings.Contains(err.Error(), ".git is never written") {
				t.Errorf("%s %s: Describe got %v, want the .git refusal", mode, c.Args, err)
			}
			b.mustFail(t, c, nil, ".git is never written")
			b.mustFail(t, c, forged, ".git is never written")
		}
	}
	if got := readFile(t, filepath.Join(b.ws, ".git", "HEAD")); got != "ref: refs/heads/main\n" {
		t.Errorf("HEAD is now %q", got)
	}
	absent(t, filepath.Join(b.ws, ".git", "config"))
	absent(t, filepath.Join(b.ws, ".git", "hooks"))
	absent(t, filepath.Join(b.ws, "sub"))
}

// TestGitmodulesGatedEveryMode: .gitmodules and .gitattributes are gated in every mode,
// because they decide what git itself runs, and so are the files hook managers read their
// commands from; approved, they are written.
func TestGitmodulesGatedEveryMode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, mode := range []runlist.Mode{runlist.ModeAsk, runlist.ModeEdit, runlist.ModeRun} {
		b.setMode(t, mode)
		for _, path := range []string{".gitmodules", "src/.gitattributes", "lefthook.yml", ".pre-commit-config.yaml"} {
			c := call("write", `{"path":"`+path+`","content":"`+string(mode)+`\n"}`)
			if got := b.tier(t, c); got != gated {
				t.Errorf("%s %s: got %s, want gated", mode, path, got)
			}
			b.mustFail(t, c, nil, "needs the owner's approval")
			env := b.mustDescribe(t, c)
			if !strings.Contains(env.Preview, fmt.Sprintf(reasonGitDecides, filepath.Base(path))) {
				t.Errorf("%s %s: the card does not name the rule:\n%s", mode, path, env.Preview)
			}
			b.mustRun(t, c, env)
			if got := readFile(t, filepath.Join(b.ws, path)); got != string(mode)+"\n" {
				t.Errorf("%s %s: got %q", mode, path, got)
			}
		}
		edit := call("edit", `{"path":".gitmodules","old":"`+string(mode)+`","new":"edited"}`)
		if got := b.tier(t, edit); got != gated {
			t.Errorf("%s edit .gitmodules: got %s, want gated", mode, got)
		}
		b.mustFail(t, edit, nil, "needs the owner's approval")
	}
}

// TestEdit: exact replacement, refused when old is absent or ambiguous; all replaces each.
func TestEdit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	path := filepath.Join(b.ws, "twice.txt")
	writeFile(t, path, "x = 1\ny = 2\nx = 1\n")
	b.mustFail(t, call("edit", `{"path":"twice.txt","old":"x = 1","new":"x = 3"}`), nil, "occurs 2 times")
	b.mustFail(t, call("edit", `{"path":"twice.txt","old":"z","new":"w"}`), nil, "does not occur")
	b.mustFail(t, call("edit", `{"path":"twice.txt","old":"y","new":"y"}`), nil, "the same text")
	b.mustFail(t, call("edit", `{"path":"missing.txt","old":"y","new":"z"}`), nil, "does not exist")
	if _, err := b.describe(t, call("edit", `{"path":"twice.txt","old":"x = 1","new":"x = 3"}`)); err == nil {
		t.Error("Describe accepted an ambiguous edit")
	}
	text := b.mustRun(t, call("edit", `{"path":"twice.txt","old":"x = 1","new":"x = 3","all":true}`), nil)
	if got := readFile(t, path); got != "x = 3\ny = 2\nx = 3\n" {
		t.Errorf("got %q", got)
	}
	for _, want := range []string{path, "Replaced 2 occurrences", "+2 −2"} {
		if !strings.Contains(text, want) {
			t.Errorf("result %q does not say %q", text, want)
		}
	}
	b.mustRun(t, call("edit", `{"path":"twice.txt","old":"y = 2\n","new":""}`), nil)
	if got := readFile(t, path); got != "x = 3\nx = 3\n" {
		t.Errorf("got %q", got)
	}
}

// TestWrite: a write creates its parents, replaces a file whole and keeps its mode, and
// says the path it acted on.
func TestWrite(t *testing.T) {
	t.Parallel()
	b := setup(t)
	text := b.mustRun(t, call("write", `{"path":"new/deep/file.txt","content":"hello\n"}`), nil)
	path := filepath.Join(b.ws, "new", "deep", "file.txt")
	if got := readFile(t, path); got != "hello\n" {
		t.Errorf("got %q", got)
	}
	if !strings.Contains(text, path) || !strings.Contains(text, "created") {
		t.Errorf("result %q does not name the path and the creation", text)
	}
	script := filepath.Join(b.ws, "run.sh")
	writeFile(t, script, "old\n")
	if err := os.Chmod(script, 0o750); err != nil {
		t.Fatal(err)
	}
	b.mustRun(t, call("write", `{"path":"run.sh","content":"#!/bin/sh\n"}`), nil)
	info, err := os.Stat(script)
	if err != nil || info.Mode().Perm() != 0o750 {
		t.Errorf("got %v, %v; want mode 0750 kept", info.Mode(), err)
	}
	b.mustFail(t, call("write", `{"path":"src","content":"x"}`), nil, "not a regular file")
	entries, _ := os.ReadDir(b.ws)
	if slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), ".buddi-") }) {
		t.Error("a temporary file was left behind")
	}
}

// TestPolicyFacts: write and edit show the permission engine an edit of the absolute
// target.
func TestPolicyFacts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, c := range []plugins.Call{
		call("write", `{"path":"src/x.go","content":""}`),
		call("edit", `{"path":"src/x.go","old":"a","new":"b"}`),
	} {
		tool, _ := b.reg.Lookup(c.Tool)
		facts := tool.(plugins.PolicyDescriber).PolicyFacts(c)
		if !facts.Edit || !slices.Equal(facts.Paths, []string{filepath.Join(b.ws, "src", "x.go")}) || facts.Shell {
			t.Errorf("%s: got %+v", c.Tool, facts)
		}
		c.Agent = "stranger"
		if facts := tool.(plugins.PolicyDescriber).PolicyFacts(c); !slices.Equal(facts.Paths, []string{"src/x.go"}) {
			t.Errorf("%s without a workspace: got %+v, want the path as given", c.Tool, facts)
		}
	}
	tool, _ := b.reg.Lookup("developer.write")
	abs := tool.(plugins.PolicyDescriber).PolicyFacts(call("write", `{"path":"/etc/../etc/passwd","content":""}`))
	if !slices.Equal(abs.Paths, []string{"/etc/passwd"}) {
		t.Errorf("got %+v", abs)
	}
}
