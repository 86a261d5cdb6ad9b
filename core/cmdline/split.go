package cmdline

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Errors from Split: a command that cannot be turned into an argument vector at all.
var (
	// ErrUnterminatedQuote is a command whose last quote is never closed.
	ErrUnterminatedQuote = errors.New("cmdline: unterminated quote")
	// ErrNUL is a command holding a NUL byte, which no argument vector can carry.
	ErrNUL = errors.New("cmdline: NUL byte in command")
)

// Line is a command string read into words.
type Line struct {
	// Argv is the words, quotes removed; nil for a blank command.
	Argv []string
	// Impurity is the first thing that keeps the command from being plain; nil when there
	// is none (a blank command has none, and is not plain either).
	Impurity *Impurity
}

// Plain reports whether the command is plain: at least one word, and nothing a shell
// would read as more than text.
func (l Line) Plain() bool {
	return l.Impurity == nil && len(l.Argv) > 0
}

// Impurity is what keeps a command from being plain.
type Impurity struct {
	// Char is the character, utf8.RuneError for a byte that is not UTF-8, or 0 when the
	// whole word is the reason (a keyword in first place).
	Char rune
	// Word is the word holding it as written, quotes included, or "" when the character
	// stands between words (a line break).
	Word string
	// Why says what a shell would make of it, and how to write it plainly, as a clause.
	Why string
}

// String renders the impurity for a reason: `"$HOME/x" holds '$', which is read …`.
func (im *Impurity) String() string {
	switch {
	case im.Char == utf8.RuneError:
		return fmt.Sprintf("%q holds a byte that %s", im.Word, im.Why)
	case im.Char == 0:
		return fmt.Sprintf("%q %s", im.Word, im.Why)
	case im.Word == "":
		return fmt.Sprintf("it holds %q, which %s", im.Char, im.Why)
	}
	return fmt.Sprintf("%q holds %q, which %s", im.Word, im.Char, im.Why)
}

// Split reads a command into words with no shell: words are separated by unquoted spaces,
// tabs and line breaks; single and double quotes group and are removed; every other
// character is itself. It fails only when no argument vector can be made: an unterminated
// quote (ErrUnterminatedQuote) or a NUL byte (ErrNUL). A blank command gives no words.
//
// The Line's Impurity is the first of: a character that is more than text where it
// stands (see MoreThanText); a line break between words; a first word that a shell would
// read as an assignment (NAME=value, unquoted) or as a keyword (if, time, while, …). Quotes
// make a wildcard, a comment or a history character text, and an assignment or keyword a
// program name; they do not make the characters of NeverPlain text.
func Split(s string) (Line, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return Line{}, ErrNUL
	}
	var (
		l       Line
		w       strings.Builder
		inWord  bool
		start   int       // byte offset where the current word began
		pending *Impurity // found in the current word, given its word once it ends
	)
	flush := func(end int) {
		if !inWord {
			return
		}
		raw := s[start:end]
		if pending == nil && l.Impurity == nil && len(l.Argv) == 0 {
			pending = firstWord(raw)
		}
		if pending != nil && l.Impurity == nil {
			pending.Word = raw
			l.Impurity = pending
		}
		pending = nil
		l.Argv = append(l.Argv, w.String())
		w.Reset()
		inWord = false
	}
	rd := NewReader(s)
	for {
		tok, ok := rd.Next()
		if !ok {
			break
		}
		if tok.Kind == Blank {
			flush(tok.Pos)
			continue
		}
		if tok.Kind == Special && tok.Quoting == Unquoted && lineBreak(tok.Rune) {
			flush(tok.Pos)
			if l.Impurity == nil {
				l.Impurity = &Impurity{Char: tok.Rune, Why: why(tok)}
			}
			continue
		}
		if !inWord {
			start, inWord = tok.Pos, true
		}
		switch tok.Kind {
		case Text:
			w.WriteString(tok.Text)
		case Special:
			if pending == nil && l.Impurity == nil {
				pending = &Impurity{Char: tok.Rune, Why: why(tok)}
			}
			w.WriteString(tok.Text)
		}
	}
	if rd.Quoting() != Unquoted {
		return Line{}, ErrUnterminatedQuote
	}
	flush(len(s))
	return l, nil
}

// Plain returns the words of s when s is a plain command (see Split), and false for
// anything else: a command that is not plain, cannot be split, or is blank.
func Plain(s string) ([]string, bool) {
	l, err := Split(s)
	if err != nil || !l.Plain() {
		return nil, false
	}
	return l.Argv, true
}

// lineBreak reports whether r separates words outside quotes, as a line break would.
func lineBreak(r rune) bool {
	return r == '\n' || r == '\r' || r == '\v' || r == '\f'
}

// why says what a shell makes of a Special token, as a clause.
func why(tok Token) string {
	r := tok.Rune
	switch {
	case r == utf8.RuneError && len(tok.Text) == 1:
		return "is not valid UTF-8"
	case r == '\n':
		return "ends a command for a shell"
	case r == '\t':
		return "is a tab inside quotes, which the card cannot show"
	case strings.ContainsRune(NeverPlain, r):
		return "is read by a shell as more than text"
	case r == '*' || r == '?':
		return "is a wildcard a shell expands into file names (in quotes it is text)"
	case r == '#':
		return "starts a comment for a shell (in quotes it is text)"
	case r == '!':
		return "is history expansion or negation for a shell (in single quotes it is text)"
	case r == '^':
		return "is history substitution for a shell (in quotes it is text)"
	}
	return "does not print, so the card cannot show it"
}

// keywords are the words a shell reads as its own syntax when they come first (those made
// of NeverPlain and ! are refused as characters).
var keywords = map[string]bool{
	"case": true, "coproc": true, "do": true, "done": true, "elif": true, "else": true,
	"esac": true, "fi": true, "for": true, "function": true, "if": true, "in": true,
	"select": true, "then": true, "time": true, "until": true, "while": true,
}

// firstWord returns the impurity of a first word as written (raw) that a shell would read
// as a keyword or an assignment rather than as a program name, or nil.
func firstWord(raw string) *Impurity {
	if keywords[raw] {
		return &Impurity{Why: "is a keyword for a shell when it comes first (quoted, it is a program name)"}
	}
	if isAssignment(raw) {
		return &Impurity{Char: '=', Why: "makes the first word an assignment for a shell (quoted, it is a program name)"}
	}
	return nil
}

// isAssignment reports whether raw begins NAME=, unquoted.
func isAssignment(raw string) bool {
	eq := strings.IndexByte(raw, '=')
	if eq <= 0 {
		return false
	}
	for i, c := range raw[:eq] {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
