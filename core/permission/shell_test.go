package permission

import (
	"slices"
	"testing"
)

// readerSeeds are command strings for the two readers of shell.go: plain ones, and ones
// holding each thing a reader can get wrong.
var readerSeeds = []string{
	"git status", "git 'status'", `"git" status`, `echo a"b c"'d'e`, `echo '' ""`, `echo "it's"`,
	`echo 'say "hi"'`, "\tgit  status\t", "ls '*.go'", "rg -g '!x' y", "echo '#x' \"^y\"", "'time' ls",
	"echo '$HOME'", `echo "$HOME"`, "echo $(id)", "echo `id`", `echo a\ b`, `echo "a\"b"`, "ls *.go",
	"ls [ab]", "ls {a,b}", "ls ~", "echo a#b", "echo !x", "echo ^x", "a;b", "a|b", "a&b", "a>b",
	"FOO=bar ls", "time ls", "git\u00a0status", "echo a\u200bb", "echo 'a\tb'", "a\nb", "a\rb",
	"a\x7fb", "a\x00b", "a\xffb", "echo 'x", `echo "x`, "", " ",
}

// TestScanShellReadsPlainWords: on a command plainWords accepts, the deny-side reader
// reads the same words, as one segment it is sure of; so a deny rule sees exactly the
// words an allow rule matched.
func TestScanShellReadsPlainWords(t *testing.T) {
	t.Parallel()
	for _, s := range readerSeeds {
		checkReaders(t, s)
	}
}

// FuzzShellReaders is TestScanShellReadsPlainWords on any string.
func FuzzShellReaders(f *testing.F) {
	for _, s := range readerSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkReaders(t, s)
	})
}

// checkReaders checks one string against both readers.
func checkReaders(t *testing.T, s string) {
	t.Helper()
	words, ok := plainWords(s)
	if !ok {
		return
	}
	res := scanShell(s)
	if !res.understood || len(res.segments) != 1 {
		t.Fatalf("%q: plain %q, but scanShell read %d segments (understood %v)", s, words, len(res.segments), res.understood)
	}
	var got []string
	for _, w := range res.segments[0] {
		if w.unsure() {
			t.Errorf("%q: plain %q, but scanShell is unsure of %q", s, words, w.text)
		}
		got = append(got, w.text)
	}
	if !slices.Equal(got, words) {
		t.Errorf("%q: plainWords read %q, scanShell %q", s, words, got)
	}
}
