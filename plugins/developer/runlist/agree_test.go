package runlist_test

import (
	"slices"
	"testing"

	"buddi/core/cmdline"
	"buddi/core/permission"
	"buddi/plugins/developer/runlist"
	"buddi/plugins/developer/spawn"
)

// hostile are command strings that a reader of words can get wrong: quotes, backslashes,
// expansions, globs, comments, history characters, shell operators, keywords and
// assignments in first place, unicode spaces, control characters, NUL, invalid UTF-8,
// unterminated quotes, and nothing at all.
var hostile = []string{
	"git status", "git 'status'", `"git" status`, `echo a"b c"'d'e`, `echo '' ""`,
	`echo "it's"`, `echo 'say "hi"'`, "  ls   -la\tsrc  ", "echo é",
	"echo '$HOME'", `echo "$HOME"`, "echo $HOME", "echo ${HOME}", "echo $(id)", "echo `id`",
	`echo "$(id)"`, `echo a\ b`, `echo 'a\b'`, `echo "a\"b"`, `echo \'`, "echo a\\",
	"ls *.go", "ls '*.go'", `ls "*.go"`, "ls a?", "find . -name 'a?.go'", "ls [ab]", "ls '[ab]'",
	"ls {a,b}", "ls ~", "ls a~b", "ls '~'",
	"echo a#b", "echo #x", "echo '#x'", `grep -n ""#x x`, "echo !x", "echo '!x'", `echo "!x"`,
	"rg -g '!vendor' foo", "echo ^x", "echo '^x'",
	"echo a;b", "echo 'a;b'", "echo a|b", "echo a&b", "echo a>b", "echo a<b", "echo (a)", "echo ')'",
	"FOO=bar ls", "'FOO=bar' ls", "ls FOO=bar", "time ls", "'time' ls", "if true", "ls if",
	"git\u00a0status", "git\u2003status", "git\u3000status", "echo a\u200bb", "echo a\u202eb",
	"echo a\u2028b", "echo\ta", "echo 'a\tb'", "echo \"a\tb\"", "echo a\nb", "echo 'a\nb'",
	"echo a\rb", "echo a\vb", "echo a\fb", "echo a\x7fb", "echo a\x1bb", "echo \x00", "echo '\x00'",
	"echo \xff", "echo '\xff'", "echo \xc3", "echo 'x", `echo "x`, "'", `"`, `echo "a'`,
	"", "   ", "\t", "\n", "''", `""`,
}

// TestReadersAgree is the finding of issue 15 item 7: the permission engine's allow rules
// and the run tool read the same command string, and must read the same words or refuse
// it alike. Permission's side is ParseRule (the words of an allow rule) and CommandAllowed
// (whether a command is plain enough to match one); the run tool's side is Decide (its
// argv and whether it is plain), Split (the words spawned) and spawn.SpecFor (what runs).
func TestReadersAgree(t *testing.T) {
	t.Parallel()
	for _, s := range hostile {
		checkAgree(t, s)
	}
}

// FuzzReadersAgree is TestReadersAgree on any string: the permission engine and the run
// tool read the same words or refuse alike, and the words judged are the words spawned.
func FuzzReadersAgree(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAgree(t, s)
	})
}

// checkAgree checks one command string against every reader.
func checkAgree(t *testing.T, s string) {
	t.Helper()
	rule, ruleErr := permission.ParseRule("command(" + s + ")")
	v := runlist.Decide(runlist.Input{Command: s, Workspace: "/work/ws", Mode: runlist.ModeRun, Agent: "dev"})
	argv, splitErr := runlist.Split(s)
	if (ruleErr == nil) != v.Plain {
		t.Errorf("%q: permission reads it as plain %v (words %q, %v), the run tool as plain %v (argv %q: %s)",
			s, ruleErr == nil, rule.Words, ruleErr, v.Plain, v.Argv, v.Reason)
	}
	if ruleErr == nil && !slices.Equal(rule.Words, v.Argv) {
		t.Errorf("%q: permission reads the words %q, the run tool %q", s, rule.Words, v.Argv)
	}
	if splitErr == nil && !slices.Equal(argv, v.Argv) {
		t.Errorf("%q: judged as %q, split for spawning as %q", s, v.Argv, argv)
	}
	spec, specErr := spawn.SpecFor(s, "/work/ws", nil)
	if specErr == nil && !slices.Equal(spec.Argv, v.Argv) {
		t.Errorf("%q: judged as %q, spawned as %q", s, v.Argv, spec.Argv)
	}
	if specErr == nil && (splitErr != nil || len(argv) == 0) {
		t.Errorf("%q: spawned as %q though Split gave %q, %v", s, spec.Argv, argv, splitErr)
	}
	if splitErr != nil || len(argv) == 0 {
		return
	}
	// An allow rule naming exactly the words the run tool read matches the command when,
	// and only when, both call it plain.
	allow := "command(" + cmdline.Join(argv) + ")"
	if got := permission.CommandAllowed(s, []string{allow}); got != v.Plain {
		t.Errorf("%q: allowed by %q is %v, plain for the run tool is %v", s, allow, got, v.Plain)
	}
}
