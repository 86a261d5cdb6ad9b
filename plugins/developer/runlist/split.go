package runlist

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file reads the command string the run tool receives into the words it would spawn,
// and finds what, if anything, keeps the string from being plain (§5 item 1).
//
// There is no shell. Words are separated by unquoted white space; single and double quotes
// group, and are removed; every other character, the backslash included, is the character
// it is. The same split gives the argv of a plain command and of a gated one, so the card
// shows the words that would run.

// Errors from Split: a command that cannot be turned into an argument vector at all.
var (
	// ErrUnterminatedQuote is a command whose last quote is never closed.
	ErrUnterminatedQuote = errors.New("runlist: unterminated quote")
	// ErrNUL is a command holding a NUL byte, which no argument vector can carry.
	ErrNUL = errors.New("runlist: NUL byte in command")
)

// shellSpecial is every character §5 item 1 names as one a shell reads as more than text:
// "no $, backtick, ~, |, ;, &, <, >, (, ), {, }, [, ], newline or backslash". The newline
// is handled with the other control characters.
const shellSpecial = "$`~|;&<>(){}[]\\"

// token is one word of a command.
type token struct {
	// text is the word the program receives: quotes removed.
	text string
	// raw is the word as written, quotes included.
	raw string
}

// impurity is the first thing that keeps a command from being plain.
type impurity struct {
	// char is the character (utf8.RuneError for a byte that is not UTF-8).
	char rune
	// word is the raw word holding it, or "" when it stands between words (a newline).
	word string
	// why says what a shell would make of it, as a clause.
	why string
}

// splitResult is what tokenize read.
type splitResult struct {
	tokens []token
	// impure is nil for a plain command.
	impure *impurity
}

// Split splits a command into the words it would spawn, with no shell: words are separated
// by unquoted spaces, tabs and line breaks; single and double quotes group and are removed;
// every other character is itself. It fails only when no argument vector can be made: an
// unterminated quote or a NUL byte. An empty or blank command gives no words and no error.
func Split(command string) ([]string, error) {
	res, err := tokenize(command)
	if err != nil {
		return nil, err
	}
	return res.argv(), nil
}

// argv returns the words' texts.
func (r splitResult) argv() []string {
	if len(r.tokens) == 0 {
		return nil
	}
	out := make([]string, len(r.tokens))
	for i, t := range r.tokens {
		out[i] = t.text
	}
	return out
}

// tokenize splits cmd and records the first impurity.
func tokenize(cmd string) (splitResult, error) {
	var res splitResult
	if strings.IndexByte(cmd, 0) >= 0 {
		return res, ErrNUL
	}
	const (
		outside = iota
		single
		double
	)
	state := outside
	var text strings.Builder
	inWord := false
	start := 0 // byte offset where the current word began
	// pending is an impurity found in the current word, attributed once the word ends.
	var pending *impurity
	note := func(r rune, why string) {
		if res.impure == nil && pending == nil {
			pending = &impurity{char: r, why: why}
		}
	}
	flush := func(at int) {
		if pending != nil && res.impure == nil {
			pending.word = cmd[start:at]
			res.impure = pending
		}
		pending = nil
		if inWord {
			res.tokens = append(res.tokens, token{text: text.String(), raw: cmd[start:at]})
		}
		text.Reset()
		inWord = false
	}
	for i := 0; i < len(cmd); {
		r, size := utf8.DecodeRuneInString(cmd[i:])
		if !inWord && state == outside && !isBlank(r) {
			start = i
		}
		switch {
		case r == utf8.RuneError && size == 1:
			note(r, "is not valid UTF-8")
		case strings.ContainsRune(shellSpecial, r):
			note(r, "is read by a shell as more than text")
		case r == '\n' || r == '\r' || r == '\v' || r == '\f':
			why := "ends a command for a shell"
			if r == '\v' || r == '\f' {
				why = "does not print, so the card cannot show it"
			}
			if state == outside {
				// Between words: attribute it to no word.
				if res.impure == nil && pending == nil {
					res.impure = &impurity{char: r, why: why}
				}
			} else {
				note(r, why)
			}
		case r == '\t' && state != outside:
			note(r, "is a tab inside quotes, which the card cannot show")
		case r == '#' && state == outside && !inWord:
			note(r, "starts a comment for a shell when it begins a word")
		case r != ' ' && r != '\t' && !unicode.IsPrint(r):
			note(r, "does not print, so the card cannot show it")
		}
		switch state {
		case outside:
			switch {
			case isBlank(r):
				flush(i)
			case r == '\'':
				state, inWord = single, true
			case r == '"':
				state, inWord = double, true
			default:
				text.WriteString(cmd[i : i+size])
				inWord = true
			}
		case single:
			if r == '\'' {
				state = outside
			} else {
				text.WriteString(cmd[i : i+size])
			}
		case double:
			if r == '"' {
				state = outside
			} else {
				text.WriteString(cmd[i : i+size])
			}
		}
		i += size
	}
	if state != outside {
		return splitResult{}, ErrUnterminatedQuote
	}
	flush(len(cmd))
	return res, nil
}

// isBlank reports whether r separates words outside quotes.
func isBlank(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

// describe renders an impurity for a reason: `"$HOME/x" holds $, which is read by …`.
func (im *impurity) describe() string {
	ch := fmt.Sprintf("%q", im.char)
	if im.char == utf8.RuneError {
		ch = "a byte that"
		return fmt.Sprintf("%q holds %s %s", im.word, ch, im.why)
	}
	if im.word == "" {
		return fmt.Sprintf("it holds %s, which %s", ch, im.why)
	}
	return fmt.Sprintf("%q holds %s, which %s", im.word, ch, im.why)
}
