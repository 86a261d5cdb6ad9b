package cmdline

import (
	"strings"
	"unicode/utf8"
)

// Quote writes a word so that Split reads it back as that one word: bare when every
// character is text outside quotes, else in single quotes, in double quotes when the word
// holds a ' (and no " or !), and otherwise as single-quoted stretches with each run of '
// in double quotes. A word that Split would call plain in any spelling is plain as
// written here. A word holding NUL cannot be written (Split refuses any command holding
// one).
func Quote(word string) string {
	if bare(word) {
		return word
	}
	if !strings.Contains(word, "'") {
		return "'" + word + "'"
	}
	if !strings.ContainsAny(word, `"!`) {
		return `"` + word + `"`
	}
	var b strings.Builder
	for word != "" {
		n := strings.IndexByte(word, '\'')
		switch {
		case n < 0:
			n = len(word)
			fallthrough
		case n > 0:
			b.WriteString("'" + word[:n] + "'")
		default:
			n = len(word) - len(strings.TrimLeft(word, "'"))
			b.WriteString(`"` + word[:n] + `"`)
		}
		word = word[n:]
	}
	return b.String()
}

// Join writes words as one command that Split reads back as those words: each word
// quoted by Quote, separated by single spaces, and a first word that would read as a
// keyword or an assignment quoted too.
func Join(words []string) string {
	var b strings.Builder
	for i, w := range words {
		q := Quote(w)
		if i == 0 && firstWord(q) != nil {
			q = "'" + q + "'" // bare, so it holds no '
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(q)
	}
	return b.String()
}

// bare reports whether every character of word is text outside quotes, so that it needs
// none.
func bare(word string) bool {
	if word == "" {
		return false
	}
	for i := 0; i < len(word); {
		r, size := utf8.DecodeRuneInString(word[i:])
		invalid := r == utf8.RuneError && size == 1
		if r == '\'' || r == '"' || r == ' ' || r == '\t' || MoreThanText(r, invalid, Unquoted) {
			return false
		}
		i += size
	}
	return true
}
