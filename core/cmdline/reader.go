package cmdline

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Quoting is where a character stands: outside quotes, or inside single or double quotes.
type Quoting uint8

const (
	// Unquoted is outside any quotes.
	Unquoted Quoting = iota
	// Single is inside '…'.
	Single
	// Double is inside "…".
	Double
)

// Kind is what a Token is.
type Kind uint8

const (
	// Text is a run of characters that are text where they stand.
	Text Kind = iota + 1
	// Blank is a run of unquoted spaces and tabs: it ends a word.
	Blank
	// Open is a quote character opening a quoted stretch; Token.Quoting is the stretch's.
	Open
	// Close is the quote character closing it; Token.Quoting is the stretch's.
	Close
	// Special is one character that is more than text where it stands (see MoreThanText).
	Special
)

// Token is one step of a Reader.
type Token struct {
	// Kind is what the token is.
	Kind Kind
	// Text is the token as written: a substring of the command.
	Text string
	// Rune is a Special token's character: utf8.RuneError for a byte that is not UTF-8.
	Rune rune
	// Quoting is where the token stands (for Open and Close: the stretch they bound).
	Quoting Quoting
	// Pos is the token's byte offset in the command.
	Pos int
}

// NeverPlain are the characters that a shell reads as more than text and that a plain
// command holds nowhere, quoted or not (seed 000 §5 item 1's list; the newline and the
// other control characters are refused as characters that do not print).
const NeverPlain = "$`~|;&<>(){}[]\\"

// MoreThanText reports whether r, standing in q, is more than text: one of NeverPlain
// anywhere; a wildcard (* ?), a comment (#) or a history character (^) outside quotes; !
// outside single quotes; a tab inside quotes; NUL, a byte that is not UTF-8 (invalid), and
// any character but the space that does not print (control and format characters, line
// breaks, unicode spaces). An unquoted space or tab is not more than text: it separates
// words.
func MoreThanText(r rune, invalid bool, q Quoting) bool {
	switch {
	case invalid || r == 0:
		return true
	case strings.ContainsRune(NeverPlain, r):
		return true
	case r == '!':
		return q != Single
	case r == '*' || r == '?' || r == '#' || r == '^':
		return q == Unquoted
	case r == '\t':
		return q != Unquoted
	case r == ' ':
		return false
	}
	return !unicode.IsPrint(r)
}

// Reader reads a command string token by token. The zero Reader reads nothing; make one
// with NewReader.
type Reader struct {
	s string
	i int
	q Quoting
}

// NewReader returns a Reader at the start of s, outside quotes.
func NewReader(s string) *Reader {
	return &Reader{s: s}
}

// Quoting is where the next character stands. After the last token, anything but Unquoted
// is an unterminated quote.
func (rd *Reader) Quoting() Quoting {
	return rd.q
}

// next decodes the character at the reader's position.
func (rd *Reader) next() (r rune, size int, invalid bool) {
	r, size = utf8.DecodeRuneInString(rd.s[rd.i:])
	return r, size, r == utf8.RuneError && size == 1
}

// Next returns the next token, and false at the end of the string.
func (rd *Reader) Next() (Token, bool) {
	if rd.i >= len(rd.s) {
		return Token{}, false
	}
	start := rd.i
	r, size, invalid := rd.next()
	tok := Token{Quoting: rd.q, Pos: start}
	switch {
	case rd.q == Unquoted && (r == '\'' || r == '"'):
		rd.q = Single
		if r == '"' {
			rd.q = Double
		}
		tok.Kind, tok.Quoting = Open, rd.q
		rd.i += size
	case rd.q == Single && r == '\'' || rd.q == Double && r == '"':
		tok.Kind = Close
		rd.q = Unquoted
		rd.i += size
	case rd.q == Unquoted && (r == ' ' || r == '\t'):
		tok.Kind = Blank
		for rd.i < len(rd.s) && (rd.s[rd.i] == ' ' || rd.s[rd.i] == '\t') {
			rd.i++
		}
	case MoreThanText(r, invalid, rd.q):
		tok.Kind, tok.Rune = Special, r
		rd.i += size
	default:
		tok.Kind = Text
		rd.i += size
		for rd.i < len(rd.s) {
			r, size, invalid := rd.next()
			if rd.ends(r, invalid) {
				break
			}
			rd.i += size
		}
	}
	tok.Text = rd.s[start:rd.i]
	return tok, true
}

// ends reports whether r ends a run of text standing where the reader is.
func (rd *Reader) ends(r rune, invalid bool) bool {
	switch rd.q {
	case Unquoted:
		if r == '\'' || r == '"' || r == ' ' || r == '\t' {
			return true
		}
	case Single:
		if r == '\'' {
			return true
		}
	case Double:
		if r == '"' {
			return true
		}
	}
	return MoreThanText(r, invalid, rd.q)
}

// Peek returns the next character without reading it (utf8.RuneError for a byte that is
// not UTF-8), and false at the end of the string.
func (rd *Reader) Peek() (rune, bool) {
	if rd.i >= len(rd.s) {
		return 0, false
	}
	r, _, _ := rd.next()
	return r, true
}

// Raw reads the next character as it is written, whatever it is and wherever it stands,
// without changing the quote state: a shell's backslash escape is read this way. It
// returns false at the end of the string.
func (rd *Reader) Raw() (string, bool) {
	if rd.i >= len(rd.s) {
		return "", false
	}
	_, size, _ := rd.next()
	start := rd.i
	rd.i += size
	return rd.s[start:rd.i], true
}
