package telegram

import (
	"strings"
	"unicode/utf8"

	"buddi/internal/markdown"
)

// escape escapes what Telegram's HTML mode reads as markup: &, < and > (quotes stay as
// they are).
var escape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace

// renderHTML turns the Markdown an agent writes into Telegram's HTML subset, through the same
// goldmark parse as the dashboard's (markdown.Telegram): every tag closed, links http(s)
// only, everything else escaped text. When the rendering has no text to show, or more than a
// message holds (a table's padded columns can make it longer than the Markdown split to fit),
// the Markdown goes as escaped text. A message Telegram still refuses is sent again as plain
// text (SendMessage, EditMessageText).
func renderHTML(md string) string {
	out := markdown.Telegram(md)
	if n := visibleLen(out); (n == 0 && strings.TrimSpace(md) != "") || n > MaxMessage {
		return escape(md)
	}
	return out
}

// visibleLen counts the characters Telegram shows for html, its tags dropped and each entity
// one character: what its 4096-character limit counts.
func visibleLen(html string) int {
	n := 0
	for i := 0; i < len(html); {
		switch html[i] {
		case '<':
			if j := strings.IndexByte(html[i:], '>'); j >= 0 {
				i += j + 1
				continue
			}
		case '&':
			if j := strings.IndexByte(html[i:], ';'); j >= 0 {
				i += j + 1
				n++
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(html[i:])
		i += size
		n++
	}
	return n
}

// fenced is s as a Markdown code block, shown exactly as it is: a card's preview is what a
// tool will do, written by the tool, and no character of it may turn into formatting or be
// dropped as a Markdown escape. The fence is longer than any run of backticks in s.
func fenced(s string) string {
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "\n" + s + "\n" + fence
}

// literal is s, plain text as Telegram showed it, with every ASCII punctuation mark
// backslash-escaped, so that rendering it as Markdown shows the same text again.
func literal(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
