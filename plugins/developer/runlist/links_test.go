package runlist

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"buddi/plugins/developer/confine"
)

// linkWorkspace builds a workspace with links in it and returns its confinement:
//
//	ws/a.txt  ws/src/main.go  ws/src/pkg/m.py  ws/d/x
//	ws/l        ->  ../outside          (a link out)
//	ws/src/in   ->  ..                  (a link in)
//	ws/dl       ->  ../nowhere          (dangling)
//	ws/d/k      ->  ../a.txt            (a link below a directory)
//	outside/secret
func linkWorkspace(t testing.TB) *confine.Root {
	t.Helper()
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	for _, f := range []string{"ws/a.txt", "ws/src/main.go", "ws/src/pkg/m.py", "ws/d/x", "outside/secret"} {
		p := filepath.Join(base, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"ws/l": "../outside", "ws/src/in": "..", "ws/dl": "../nowhere", "ws/d/k": "../a.txt"} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	root, err := confine.New(ws, confine.Options{Home: filepath.Join(base, "home")})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestDecideThroughLinks: with a Root, a path through a link is refused whoever reads it,
// a path that is not one is left alone, and the run directory is resolved first.
func TestDecideThroughLinks(t *testing.T) {
	t.Parallel()
	root := linkWorkspace(t)
	in := func(cmd, cwd string, mode Mode) Input {
		return Input{Command: cmd, Cwd: cwd, Workspace: root.Dir(), Mode: mode, Agent: "dev", Root: root}
	}
	tests := []struct {
		cmd, cwd string
		want     Kind
		rule     Rule
	}{
		{"cat l/secret", "", Refused, RuleSymlink},
		{"cat dl", "", Refused, RuleSymlink},
		{"cat dl/new", "", Refused, RuleSymlink},
		{"cat in/a.txt", "src", Refused, RuleSymlink},
		{"cat ../l/secret", "src", Refused, RuleSymlink}, // the table asks (it climbs); the words refuse
		{"ls", "l", Refused, RuleCwdSymlink},
		{"ls", "src/in", Refused, RuleCwdSymlink},
		{"ls", "a.txt", Refused, RuleCwdMissing},
		{"ls", "nope", Refused, RuleCwdMissing},
		{"diff d src", "", Refused, RuleSymlink},
		{"diff -r . src", "", Refused, RuleSymlink},
		{"python3 -m unittest l.secret", "", Refused, RuleSymlink},
		{"python3 -m pytest -p l", "", Refused, RuleSymlink},
		{"prettier --write l/new.js", "", Refused, RuleSymlink},
		{"vim -c x l/secret", "", Refused, RuleSymlink},
		{"cp a.txt --target-directory=l", "", Refused, RuleSymlink},
		{"env PATH=bin:l/bin x", "", Refused, RuleSymlink},
		{"cat a.txt src/main.go", "", Auto, RuleRunList},
		{"grep l a.txt", "", Auto, RuleRunList},
		{"echo l dl", "", Auto, RuleRunList},
		{"diff a.txt src/main.go", "", Auto, RuleRunList},
		{"python3 -m unittest src.pkg.m", "", Auto, RuleRunList},
		{"prettier --write new.js", "", Auto, RuleRunList},
		{"ls", "src", Auto, RuleRunList},
		{"vim a.txt", "", Gated, RuleNotListed},
	}
	for _, tt := range tests {
		for _, mode := range []Mode{ModeRun, ModeEdit, ModeAsk} {
			if tt.want != Refused && mode != ModeRun {
				continue
			}
			v := Decide(in(tt.cmd, tt.cwd, mode))
			if v.Kind != tt.want || v.Rule != tt.rule {
				t.Errorf("%s mode, %q in %q: got %v %s (%s), want %v %s", mode, tt.cmd, tt.cwd, v.Kind, v.Rule, v.Reason, tt.want, tt.rule)
			}
			if v.Kind == Refused && !strings.Contains(v.Reason, v.Program) {
				t.Errorf("%q: the reason %q does not name the program", tt.cmd, v.Reason)
			}
		}
	}
	if v := Decide(in("cat "+filepath.Join(root.Dir(), "l", "secret"), "", ModeRun)); v.Kind != Refused || v.Rule != RuleSymlink {
		t.Errorf("an absolute path through a link: got %v %s (%s)", v.Kind, v.Rule, v.Reason)
	}
	if v := Decide(in("cat ../ws/l/secret", "", ModeRun)); v.Kind != Refused || v.Rule != RuleSymlink {
		t.Errorf("a path that climbs out and back in through a link: got %v %s (%s)", v.Kind, v.Rule, v.Reason)
	}
}

// TestPathReadings lists the ways a word is read as a path.
func TestPathReadings(t *testing.T) {
	t.Parallel()
	for w, want := range map[string][]string{
		"a/b":                {"a/b"},
		"--out=x/y":          {"--out=x/y", "x/y"},
		"-ofile":             {"-ofile", "file"},
		"PATH=a:b,c":         {"PATH=a:b,c", "PATH=a", "b", "c", "a:b,c", "a"},
		"k=v=w":              {"k=v=w", "v=w", "w"},
		"":                   nil,
		"--flag":             {"--flag"},
		"-x=":                {"-x=", "="},
		"::,":                {"::,"},
		"--a=b:home/.bashrc": {"--a=b:home/.bashrc", "--a=b", "home/.bashrc", "b:home/.bashrc", "b"},
	} {
		if got := pathReadings(w); !slices.Equal(got, want) {
			t.Errorf("pathReadings(%q) = %q, want %q", w, got, want)
		}
	}
}

// readsOnlyItsOperands are programs of the table that read nothing but the files named on
// their command line and have no operand that is not a path: whatever the grammar makes of
// a word, none of theirs may reach a link when they run without a card.
var readsOnlyItsOperands = map[string]bool{"cat": true, "head": true, "tail": true, "wc": true, "sort": true, "uniq": true, "ls": true, "diff": true}

// FuzzDecideLinks runs Decide with a Root on a workspace with links in it, in any mode and
// cwd: it never panics; a refusal names its rule and the program; a cwd through a link is
// never run in; and a program that reads only its operands is never auto with a word that,
// read any way at all, reaches a link.
func FuzzDecideLinks(f *testing.F) {
	root := linkWorkspace(f)
	for _, s := range [][2]string{
		{"cat l/secret", ""}, {"cat a.txt", ""}, {"ls -l", "l"}, {"diff -ru d src", ""},
		{"head -n 1 dl", ""}, {"sort -u in/a.txt", "src"}, {"python3 -m unittest l.x", ""},
		{"prettier --write l/x.js", ""}, {"cp a l/b", ""}, {"wc -l ../ws/l/secret", ""},
		{"cat src/../l/secret", ""}, {"ls", "src/in/l"}, {"uniq -c d/k", ""}, {"grep -r l .", ""},
	} {
		f.Add(s[0], s[1], uint8(2))
	}
	links := []string{"l", "src/in", "dl", "d/k"}
	f.Fuzz(func(t *testing.T, cmd, cwd string, m uint8) {
		mode := []Mode{ModeAsk, ModeEdit, ModeRun}[m%3]
		in := Input{Command: cmd, Cwd: cwd, Workspace: root.Dir(), Mode: mode, Agent: "dev", Root: root}
		if argv, err := Split(cmd); err == nil && len(argv) > 0 {
			in.Remembered = []Remembered{{Agent: "dev", Workspace: root.Dir(), Argv: argv[:1], Prefix: true}}
		}
		v := Decide(in)
		if v.Kind == Refused && (v.Rule == "" || v.Reason == "") {
			t.Fatalf("%q in %q: refused with no rule or reason", cmd, cwd)
		}
		if v.Kind == Refused && v.Program != "" && !strings.Contains(v.Reason, printable(v.Program)) {
			t.Fatalf("%q in %q: the refusal %q does not name %q", cmd, cwd, v.Reason, v.Program)
		}
		if v.Kind == Refused {
			return
		}
		rel, err := filepath.Rel(root.Dir(), v.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links {
			if rel == l || strings.HasPrefix(rel, l+"/") {
				t.Fatalf("%q in %q: runs in %q, through the link %q", cmd, cwd, v.Dir, l)
			}
		}
		if v.Kind != Auto || v.Rule == RuleRemembered || !readsOnlyItsOperands[v.Program] {
			return
		}
		for _, w := range v.Argv[1:] {
			for _, r := range pathReadings(w) {
				if reachesLink(filepath.Join(v.Dir, r), root.Dir(), links) {
					t.Fatalf("%q in %q: auto, and %q reaches a link (%s)", cmd, cwd, w, v.Reason)
				}
			}
		}
	})
}

// reachesLink reports whether the absolute path p, cleaned, is at or below one of links
// (relative to ws), or would be after its first .. is taken lexically.
func reachesLink(p, ws string, links []string) bool {
	clean := filepath.Clean(p)
	rel, err := filepath.Rel(ws, clean)
	if err != nil || !filepath.IsLocal(rel) {
		return false
	}
	for _, l := range links {
		if rel == l || strings.HasPrefix(rel, l+"/") {
			return true
		}
	}
	return false
}
