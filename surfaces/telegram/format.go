package telegram

import (
	"regexp"
	"strconv"
	"strings"
)

// The Markdown an agent writes, rendered for Telegram's HTML parse mode. Everything is
// escaped first, so no text of the model's can open a tag; then a small set of marks becomes
// tags that always close in the same line or block: code blocks, inline code, bold, italic and
// links with an http(s) address. A message Telegram still refuses is sent again as plain text.
var (
	fence      = regexp.MustCompile("(?s)```[a-zA-Z0-9_+-]*\n?(.*?)```")
	inlineCode = regexp.MustCompile("`([^`\n]+)`")
	bold       = regexp.MustCompile(`\*\*([^*\n]+)\*\*`)
	italic     = regexp.MustCompile(`(^|[\s(])_([^_\n]+)_([\s).,;:!?]|$)`)
	link       = regexp.MustCompile(`\[([^\]\n]+)\]\((https?://[^\s)"<>]+)\)`)
	heading    = regexp.MustCompile(`(?m)^#{1,6} +(.+)$`)
)

// escape escapes what Telegram's HTML mode reads as markup: &, < and > (quotes stay as
// they are; a link's address never holds one).
var escape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace

// renderHTML turns Markdown into Telegram's HTML subset.
func renderHTML(md string) string {
	var blocks []string
	md = fence.ReplaceAllStringFunc(md, func(m string) string {
		inner := fence.FindStringSubmatch(m)[1]
		blocks = append(blocks, "<pre>"+escape(strings.TrimRight(inner, "\n"))+"</pre>")
		return "\x00" + strconv.Itoa(len(blocks)-1) + "\x00"
	})
	s := escape(md)
	var codes []string
	s = inlineCode.ReplaceAllStringFunc(s, func(m string) string {
		codes = append(codes, "<code>"+inlineCode.FindStringSubmatch(m)[1]+"</code>")
		return "\x01" + strconv.Itoa(len(codes)-1) + "\x01"
	})
	s = link.ReplaceAllString(s, `<a href="$2">$1</a>`)
	s = bold.ReplaceAllString(s, "<b>$1</b>")
	s = italic.ReplaceAllString(s, "$1<i>$2</i>$3")
	s = heading.ReplaceAllString(s, "<b>$1</b>")
	for i, c := range codes {
		s = strings.Replace(s, "\x01"+strconv.Itoa(i)+"\x01", c, 1)
	}
	for i, b := range blocks {
		s = strings.Replace(s, "\x00"+strconv.Itoa(i)+"\x00", b, 1)
	}
	return s
}
