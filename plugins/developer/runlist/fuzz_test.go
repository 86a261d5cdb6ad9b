package runlist

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// everythingFS says every file exists: the allowances' widest case.
type everythingFS struct{}

// Exists implements FS.
func (everythingFS) Exists(string) bool { return true }

// shellReadsMore reports whether cmd holds a character a shell reads as more than text, by
// §5 item 1's list, written out here apart from the package's own: "$, backtick, ~, |, ;,
// &, <, >, (, ), {, }, [, ], newline or backslash", and any character the card cannot show
// (control, non-printing, invalid UTF-8).
func shellReadsMore(cmd string) bool {
	if !utf8.ValidString(cmd) {
		return true
	}
	for _, r := range cmd {
		switch r {
		case '$', '`', '~', '|', ';', '&', '<', '>', '(', ')', '{', '}', '[', ']', '\n', '\\':
			return true
		case ' ', '\t':
			continue
		}
		if !unicode.IsPrint(r) {
			return true
		}
	}
	return false
}

// fuzzSeeds are the starting corpus: the benchmark's commands and the escapes.
func fuzzSeeds() []string {
	seeds := append([]string{}, benchCorpus...)
	return append(seeds,
		"echo x >>~/.zshenv", "cat $HOME/.ssh/id_ed25519", "env curl x", "node -e 1",
		"node --import=data:text/javascript,1 a.js", "grep -f /etc/passwd", "sort -o /tmp/out",
		"find -files0-from x", "rg -L x", "grep -R x", "find -L .", "npx cowsay",
		"head -n=5 x", "python -m pytest -k 'a b'", "vitest -tfoo", "echo 'a\tb'", "a\x00b", "'",
	)
}

// FuzzDecide: Decide never panics; a command holding a character a shell reads as more
// than text is never auto, even in run mode, with every file present and the command's own
// argv remembered; ask mode is never auto; an auto command is plain and spawns a program
// the run list knows.
func FuzzDecide(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s, "", uint8(2))
	}
	f.Add("ls", "app", uint8(1))
	f.Add("ls", "../x", uint8(0))
	ws := "/work/ws"
	known := map[string]bool{"npx": true}
	for p := range byProgram {
		known[p] = true
	}
	f.Fuzz(func(t *testing.T, cmd, cwd string, m uint8) {
		mode := []Mode{ModeAsk, ModeEdit, ModeRun, ""}[m%4]
		in := Input{Command: cmd, Workspace: ws, Cwd: cwd, Mode: mode, Agent: "dev", FS: everythingFS{}}
		if argv, err := Split(cmd); err == nil && len(argv) > 0 {
			in.Remembered = []Remembered{{Agent: "dev", Workspace: ws, Argv: argv}}
		}
		v := Decide(in)
		if shellReadsMore(cmd) && (v.Kind == Auto || v.Plain) {
			t.Fatalf("%q holds a character a shell reads as more than text, and got %v (%s: %s)", cmd, v.Kind, v.Rule, v.Reason)
		}
		if mode != ModeRun && mode != ModeEdit && v.Kind == Auto {
			t.Fatalf("%q in mode %q: got auto (%s)", cmd, mode, v.Reason)
		}
		if v.Kind == Auto {
			if !v.Plain || len(v.Argv) == 0 {
				t.Fatalf("%q: auto but plain=%v argv=%q", cmd, v.Plain, v.Argv)
			}
			if v.Rule != RuleRemembered && !known[v.Argv[0]] {
				t.Fatalf("%q: auto for %q, which is not on the run list (%s)", cmd, v.Argv[0], v.Reason)
			}
			if mode == ModeEdit && v.Rule != RuleRemembered {
				t.Fatalf("%q: auto in edit mode by %s", cmd, v.Rule)
			}
		}
		if v.Kind != Auto && v.Reason == "" {
			t.Fatalf("%q: %v with no reason", cmd, v.Kind)
		}
		if strings.ContainsRune(v.Reason, '\n') && !strings.ContainsRune(cmd, '\n') {
			t.Fatalf("%q: reason %q holds a newline", cmd, v.Reason)
		}
	})
}

// FuzzRunList: in run mode with no remembered commands, whatever the run list admits
// stays admitted when every word is requoted (quotes are not a way past the table), and
// stops being admitted when an operand beginning with a dash follows a -- (except for
// npx, whose arguments belong to the project's own binary).
func FuzzRunList(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	ws := "/work/ws"
	f.Fuzz(func(t *testing.T, cmd string) {
		in := Input{Command: cmd, Workspace: ws, Mode: ModeRun, Agent: "dev", FS: everythingFS{}}
		v := Decide(in)
		if v.Kind != Auto {
			return
		}
		// Requoting every word gives the same verdict: quotes are not a way past the table.
		var q []string
		for _, w := range v.Argv {
			if strings.ContainsRune(w, '\'') {
				return
			}
			q = append(q, "'"+w+"'")
		}
		in.Command = strings.Join(q, " ")
		if v2 := Decide(in); v2.Kind != Auto {
			t.Fatalf("%q is auto but requoted %q is %v (%s)", cmd, in.Command, v2.Kind, v2.Reason)
		}
		// An operand that begins with a dash after -- is never auto.
		in.Command = cmd + " -- -x"
		if v3 := Decide(in); v3.Kind == Auto && v.Argv[0] != "npx" {
			t.Fatalf("%q is auto with a dash operand after --", in.Command)
		}
	})
}
