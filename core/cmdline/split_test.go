package cmdline

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd   string
		want  []string
		plain bool
		char  rune   // the impurity's character, when not plain and there are words
		word  string // the impurity's word as written
		err   error
	}{
		{"ls", []string{"ls"}, true, 0, "", nil},
		{"  ls   -la\tsrc  ", []string{"ls", "-la", "src"}, true, 0, "", nil},
		{`grep -n "a b" 'c d'`, []string{"grep", "-n", "a b", "c d"}, true, 0, "", nil},
		{`echo a"b c"'d'e`, []string{"echo", "ab cde"}, true, 0, "", nil},
		{`echo '' ""`, []string{"echo", "", ""}, true, 0, "", nil},
		{`echo "it's"`, []string{"echo", "it's"}, true, 0, "", nil},
		{`echo 'say "hi"'`, []string{"echo", `say "hi"`}, true, 0, "", nil},
		{"--include='*.go'", []string{"--include=*.go"}, true, 0, "", nil},
		{"find . -name 'a?.go'", []string{"find", ".", "-name", "a?.go"}, true, 0, "", nil},
		{"rg -g '!vendor' x", []string{"rg", "-g", "!vendor", "x"}, true, 0, "", nil},
		{"echo '#x' '^y'", []string{"echo", "#x", "^y"}, true, 0, "", nil},
		{"echo é ü", []string{"echo", "é", "ü"}, true, 0, "", nil},
		{"'time' ls", []string{"time", "ls"}, true, 0, "", nil},
		{"'FOO=bar' ls", []string{"FOO=bar", "ls"}, true, 0, "", nil},
		{"ls FOO=bar time", []string{"ls", "FOO=bar", "time"}, true, 0, "", nil},
		{"=x", []string{"=x"}, true, 0, "", nil},
		{"1A=x", []string{"1A=x"}, true, 0, "", nil},

		{`echo a\ b`, []string{"echo", `a\`, "b"}, false, '\\', `a\`, nil},
		{"echo $HOME", []string{"echo", "$HOME"}, false, '$', "$HOME", nil},
		{"echo '$HOME'", []string{"echo", "$HOME"}, false, '$', "'$HOME'", nil},
		{`echo "$HOME"`, []string{"echo", "$HOME"}, false, '$', `"$HOME"`, nil},
		{"echo `id`", []string{"echo", "`id`"}, false, '`', "`id`", nil},
		{"ls ~", []string{"ls", "~"}, false, '~', "~", nil},
		{"ls *.go", []string{"ls", "*.go"}, false, '*', "*.go", nil},
		{"ls a?", []string{"ls", "a?"}, false, '?', "a?", nil},
		{`ls "*"`, []string{"ls", "*"}, true, 0, "", nil},
		{"echo a#b", []string{"echo", "a#b"}, false, '#', "a#b", nil},
		{"echo !x", []string{"echo", "!x"}, false, '!', "!x", nil},
		{`echo "!x"`, []string{"echo", "!x"}, false, '!', `"!x"`, nil},
		{"echo ^x", []string{"echo", "^x"}, false, '^', "^x", nil},
		{"echo a;b c|d", []string{"echo", "a;b", "c|d"}, false, ';', "a;b", nil},
		{"echo ')'", []string{"echo", ")"}, false, ')', "')'", nil},
		{"FOO=bar ls", []string{"FOO=bar", "ls"}, false, '=', "FOO=bar", nil},
		{"F_1=x", []string{"F_1=x"}, false, '=', "F_1=x", nil},
		{"time ls", []string{"time", "ls"}, false, 0, "time", nil},
		{"if true", []string{"if", "true"}, false, 0, "if", nil},
		{"a\nb", []string{"a", "b"}, false, '\n', "", nil},
		{"'a\nb'", []string{"a\nb"}, false, '\n', "'a\nb'", nil},
		{"a\rb", []string{"a", "b"}, false, '\r', "", nil},
		{"a\vb\fc", []string{"a", "b", "c"}, false, '\v', "", nil},
		{"echo 'a\tb'", []string{"echo", "a\tb"}, false, '\t', "'a\tb'", nil},
		{"git\u00a0status", []string{"git\u00a0status"}, false, '\u00a0', "git\u00a0status", nil},
		{"git\u3000status", []string{"git\u3000status"}, false, '\u3000', "git\u3000status", nil},
		{"echo a\u200bb", []string{"echo", "a\u200bb"}, false, '\u200b', "a\u200bb", nil},
		{"echo a\u202eb", []string{"echo", "a\u202eb"}, false, '\u202e', "a\u202eb", nil},
		{"echo a\x7fb", []string{"echo", "a\x7fb"}, false, '\x7f', "a\x7fb", nil},
		{"echo \xff", []string{"echo", "\xff"}, false, utf8.RuneError, "\xff", nil},
		{"echo '\xc3'", []string{"echo", "\xc3"}, false, utf8.RuneError, "'\xc3'", nil},
		{"echo $x time\n", []string{"echo", "$x", "time"}, false, '$', "$x", nil},
		{"\nFOO=x", []string{"FOO=x"}, false, '\n', "", nil},

		{"", nil, false, 0, "", nil},
		{"   \t ", nil, false, 0, "", nil},
		{"echo 'x", nil, false, 0, "", ErrUnterminatedQuote},
		{`echo "x`, nil, false, 0, "", ErrUnterminatedQuote},
		{`echo "a'`, nil, false, 0, "", ErrUnterminatedQuote},
		{`echo "a\"b"`, nil, false, 0, "", ErrUnterminatedQuote},
		{"'", nil, false, 0, "", ErrUnterminatedQuote},
		{"echo \x00", nil, false, 0, "", ErrNUL},
		{"echo '\x00'", nil, false, 0, "", ErrNUL},
	}
	for _, tt := range tests {
		l, err := Split(tt.cmd)
		if !errors.Is(err, tt.err) {
			t.Errorf("Split(%q): got error %v, want %v", tt.cmd, err, tt.err)
			continue
		}
		if !slices.Equal(l.Argv, tt.want) {
			t.Errorf("Split(%q): got %q, want %q", tt.cmd, l.Argv, tt.want)
		}
		if l.Plain() != tt.plain {
			t.Errorf("Split(%q): got plain %v (%v), want %v", tt.cmd, l.Plain(), l.Impurity, tt.plain)
		}
		words, ok := Plain(tt.cmd)
		if ok != tt.plain || ok && !slices.Equal(words, tt.want) {
			t.Errorf("Plain(%q): got %q, %v; want %q, %v", tt.cmd, words, ok, tt.want, tt.plain)
		}
		if tt.plain || tt.err != nil || tt.want == nil {
			if l.Impurity != nil {
				t.Errorf("Split(%q): got impurity %v, want none", tt.cmd, l.Impurity)
			}
			continue
		}
		if l.Impurity == nil {
			t.Errorf("Split(%q): got no impurity, want %q in %q", tt.cmd, tt.char, tt.word)
			continue
		}
		if l.Impurity.Char != tt.char || l.Impurity.Word != tt.word {
			t.Errorf("Split(%q): got %q in %q, want %q in %q", tt.cmd, l.Impurity.Char, l.Impurity.Word, tt.char, tt.word)
		}
	}
}

func TestImpurityString(t *testing.T) {
	t.Parallel()
	tests := []struct{ cmd, want string }{
		{"cat '$HOME'", `"'$HOME'" holds '$', which is read by a shell as more than text`},
		{"a\nb", `it holds '\n', which ends a command for a shell`},
		{"echo \xff", `"\xff" holds a byte that is not valid UTF-8`},
		{"time ls", `"time" is a keyword for a shell when it comes first (quoted, it is a program name)`},
		{"ls *.go", `"*.go" holds '*', which is a wildcard a shell expands into file names (in quotes it is text)`},
	}
	for _, tt := range tests {
		l, err := Split(tt.cmd)
		if err != nil || l.Impurity == nil {
			t.Fatalf("Split(%q): got %v, %v; want an impurity", tt.cmd, l, err)
		}
		if got := l.Impurity.String(); got != tt.want {
			t.Errorf("%q: got %s, want %s", tt.cmd, got, tt.want)
		}
	}
}

// TestSpecial checks the character classes one by one, in each place a character can
// stand.
func TestMoreThanText(t *testing.T) {
	t.Parallel()
	for _, r := range NeverPlain {
		for _, q := range []Quoting{Unquoted, Single, Double} {
			if !MoreThanText(r, false, q) {
				t.Errorf("%q in quote %d: not special", r, q)
			}
		}
	}
	for _, r := range "*?#^" {
		if !MoreThanText(r, false, Unquoted) || MoreThanText(r, false, Single) || MoreThanText(r, false, Double) {
			t.Errorf("%q: want special outside quotes only", r)
		}
	}
	if !MoreThanText('!', false, Unquoted) || !MoreThanText('!', false, Double) || MoreThanText('!', false, Single) {
		t.Errorf("!: want special outside single quotes only")
	}
	if MoreThanText('\t', false, Unquoted) || !MoreThanText('\t', false, Single) || !MoreThanText('\t', false, Double) {
		t.Errorf("tab: want special inside quotes only")
	}
	for _, r := range []rune{0, '\n', '\r', '\v', '\f', 0x1b, 0x7f, 0x85, 0xa0, 0x2028, 0x200b, 0x202e, 0x3000, 0xfeff} {
		for _, q := range []Quoting{Unquoted, Single, Double} {
			if !MoreThanText(r, false, q) {
				t.Errorf("%U in quote %d: not special", r, q)
			}
		}
	}
	for _, r := range "aZ09-_./:,+=@%é'\" " {
		if MoreThanText(r, false, Unquoted) {
			t.Errorf("%q: special", r)
		}
	}
	if !MoreThanText(utf8.RuneError, true, Single) {
		t.Errorf("an invalid byte: not special")
	}
}

func TestReader(t *testing.T) {
	t.Parallel()
	type tok struct {
		k    Kind
		text string
		q    Quoting
	}
	var got []tok
	rd := NewReader(`ab 'c d'"e$"\f` + "\t*")
	for {
		tk, ok := rd.Next()
		if !ok {
			break
		}
		got = append(got, tok{tk.Kind, tk.Text, tk.Quoting})
	}
	want := []tok{
		{Text, "ab", Unquoted}, {Blank, " ", Unquoted}, {Open, "'", Single}, {Text, "c d", Single},
		{Close, "'", Single}, {Open, `"`, Double}, {Text, "e", Double}, {Special, "$", Double},
		{Close, `"`, Double}, {Special, `\`, Unquoted}, {Text, "f", Unquoted}, {Blank, "\t", Unquoted},
		{Special, "*", Unquoted},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	rd = NewReader(`\"x"`)
	if tk, _ := rd.Next(); tk.Kind != Special || tk.Rune != '\\' {
		t.Fatalf("got %+v, want the backslash", tk)
	}
	if r, ok := rd.Peek(); !ok || r != '"' {
		t.Fatalf("Peek: got %q, %v", r, ok)
	}
	if s, ok := rd.Raw(); !ok || s != `"` || rd.Quoting() != Unquoted {
		t.Fatalf("Raw: got %q, %v, quote %d; want the quote read as it is", s, ok, rd.Quoting())
	}
	if tk, _ := rd.Next(); tk.Kind != Text || tk.Text != "x" {
		t.Fatalf("got %+v, want x", tk)
	}
	if tk, _ := rd.Next(); tk.Kind != Open || rd.Quoting() != Double {
		t.Fatalf("got %+v, want a quote opening", tk)
	}
	if _, ok := rd.Raw(); ok {
		t.Fatalf("Raw at the end: got ok")
	}
	if _, ok := rd.Peek(); ok {
		t.Fatalf("Peek at the end: got ok")
	}
}

func TestQuoteAndJoin(t *testing.T) {
	t.Parallel()
	tests := []struct{ word, want string }{
		{"ls", "ls"},
		{"--include=*.go", "'--include=*.go'"},
		{"", "''"},
		{"a b", "'a b'"},
		{"it's", `"it's"`},
		{`it's "x"`, `'it'"'"'s "x"'`},
		{"it's!", `'it'"'"'s!'`},
		{"''", `"''"`},
		{"'a'!", `"'"'a'"'"'!'`},
		{"$HOME", "'$HOME'"},
		{"é", "é"},
	}
	for _, tt := range tests {
		if got := Quote(tt.word); got != tt.want {
			t.Errorf("Quote(%q): got %s, want %s", tt.word, got, tt.want)
		}
		l, err := Split(Quote(tt.word))
		if err != nil || !slices.Equal(l.Argv, []string{tt.word}) {
			t.Errorf("Split(Quote(%q)): got %q, %v", tt.word, l.Argv, err)
		}
	}
	for _, words := range [][]string{{"time", "ls"}, {"FOO=bar", "x=y"}, {"if"}, {"git", "commit", "-m", "fix: it's (not) #1!"}} {
		j := Join(words)
		l, err := Split(j)
		if err != nil || !slices.Equal(l.Argv, words) {
			t.Errorf("Split(Join(%q)) = Split(%s): got %q, %v", words, j, l.Argv, err)
		}
		wantPlain := !strings.ContainsAny(strings.Join(words, ""), NeverPlain)
		if l.Plain() != wantPlain {
			t.Errorf("Join(%q) = %s: got plain %v (%v), want %v", words, j, l.Plain(), l.Impurity, wantPlain)
		}
	}
}

// oracle says, apart from the Reader, whether a string that Split reads holds something
// that must keep it from being plain: an operator character anywhere, a character that
// does not print (but space and an unquoted tab), or invalid UTF-8. It is the part of the
// rule that quotes cannot change, checked without following quotes.
func oracle(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if strings.ContainsRune(NeverPlain, r) || r != ' ' && r != '\t' && !unicode.IsPrint(r) {
			return true
		}
	}
	return false
}

// FuzzSplit: Split never panics; whatever it accepts, Join writes back into a command that
// Split reads as the same words, plain when the first was; a plain command holds nothing
// the oracle refuses and none of * ? # ^ ! outside quotes; Quote writes any word as itself.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"ls -la", `echo a"b c"'d'e`, "echo '$HOME'", "ls *.go", "ls '*.go'",
		"FOO=bar ls", "'time' ls", "echo a\nb", "echo 'a\tb'", "git\u00a0status", "echo \xff", "'",
		`echo "it's"`, "rg -g '!x' y", `echo "!x"`, "a#b", "", " \t "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Split(s)
		word := strings.ReplaceAll(s, "\x00", "")
		if got, werr := Split(Quote(word)); werr != nil || !slices.Equal(got.Argv, []string{word}) {
			t.Errorf("Split(Quote(%q)) = Split(%q): got %q, %v", word, Quote(word), got.Argv, werr)
		}
		if err != nil {
			if l.Argv != nil || l.Impurity != nil {
				t.Errorf("%q: error %v with a line %+v", s, err, l)
			}
			return
		}
		if l.Plain() {
			if oracle(s) {
				t.Errorf("%q: plain %q, but it holds what no plain command may", s, l.Argv)
			}
			if words, ok := Plain(s); !ok || !slices.Equal(words, l.Argv) {
				t.Errorf("%q: Plain gives %q, %v; Split %q", s, words, ok, l.Argv)
			}
			rd := NewReader(s)
			for tk, ok := rd.Next(); ok; tk, ok = rd.Next() {
				if tk.Kind == Text && tk.Quoting == Unquoted && strings.ContainsAny(tk.Text, "*?#^!") {
					t.Errorf("%q: plain with %q outside quotes", s, tk.Text)
				}
			}
		} else if _, ok := Plain(s); ok {
			t.Errorf("%q: Plain accepts what Split calls not plain (%v)", s, l.Impurity)
		}
		if len(l.Argv) == 0 {
			if strings.Trim(s, " \t") != "" && l.Impurity == nil {
				t.Errorf("%q: no words and no impurity", s)
			}
			return
		}
		j := Join(l.Argv)
		back, err := Split(j)
		if err != nil || !slices.Equal(back.Argv, l.Argv) {
			t.Fatalf("%q: words %q, written back as %q, read as %q (%v)", s, l.Argv, j, back.Argv, err)
		}
		if l.Plain() && !back.Plain() {
			t.Errorf("%q: plain %q, written back as %q, which is not plain (%v)", s, l.Argv, j, back.Impurity)
		}
	})
}
