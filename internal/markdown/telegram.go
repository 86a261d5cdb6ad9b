package markdown

import (
	"bufio"
	"bytes"
	stdhtml "html"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Telegram renders md, parsed by the same goldmark as HTML, into the subset of HTML that
// Telegram's "HTML" parse mode reads: b, i, s, u, code, pre, blockquote and a with an http or
// https address. Lists become "• " and "1. " lines, headings bold lines, tables the text of a
// pre, and everything else (raw HTML included) escaped text. Every tag it writes is closed,
// none is nested in one of its own kind, and no code, pre or link holds another entity, which
// Telegram refuses.
func Telegram(md string) string {
	src := []byte(md)
	doc := renderer.Parser().Parse(text.NewReader(src))
	t := &tg{src: src}
	t.blocks(doc, "")
	return strings.TrimRight(t.out.String(), " \n")
}

// tg is one rendering: the output so far and the entities open at this point.
type tg struct {
	src                  []byte
	out                  strings.Builder
	bold, italic, strike int
	link, quote          int
}

// esc writes s escaped for Telegram's HTML (&, <, >, " and NUL; the entities it writes are
// the four Telegram knows).
func (t *tg) esc(s []byte) {
	t.out.Write(util.EscapeHTML(s))
}

// text writes Markdown text: backslash escapes and entity references resolved, then escaped
// (goldmark's own writer, so "\\&amp;" stays the text "&amp;").
func (t *tg) text(s []byte) {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	html.DefaultWriter.Write(w, s)
	_ = w.Flush()
	t.out.Write(b.Bytes())
}

// unmark is Markdown text with its backslash escapes and entity references resolved.
func unmark(s []byte) []byte {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	html.DefaultWriter.Write(w, s)
	_ = w.Flush()
	return []byte(stdhtml.UnescapeString(b.String()))
}

// blocks writes n's block children separated by blank lines, each line after the first of a
// child indented by indent (a list item's continuation).
func (t *tg) blocks(n ast.Node, indent string) {
	sep := "\n\n"
	if _, ok := n.(*ast.ListItem); ok && tightItem(n) {
		sep = "\n"
	}
	first := true
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if _, ok := c.(*ast.LinkReferenceDefinition); ok {
			continue // a link's address, shown where the link stands
		}
		if !first {
			t.out.WriteString(sep + indent)
		}
		first = false
		t.block(c, indent)
	}
}

// tightItem reports a list item of a tight list: its blocks follow each other without a
// blank line.
func tightItem(n ast.Node) bool {
	l, ok := n.Parent().(*ast.List)
	return ok && l.IsTight
}

// block writes one block node.
func (t *tg) block(n ast.Node, indent string) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		t.inlines(n, indent)
	case *ast.Heading:
		t.wrap("b", &t.bold, func() { t.inlines(n, indent) })
	case *ast.ThematicBreak:
		t.out.WriteString("———")
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		t.pre(func() { t.lines(n, indent) })
	case *ast.HTMLBlock:
		t.lines(n, indent)
		if n.HasClosure() {
			if n.Lines().Len() > 0 {
				t.out.WriteString("\n" + indent)
			}
			t.esc(bytes.TrimRight(n.ClosureLine.Value(t.src), "\n"))
		}
	case *ast.Blockquote:
		if t.quote > 0 || t.link > 0 {
			t.blocks(n, indent)
			return
		}
		t.quote++
		t.out.WriteString("<blockquote>")
		t.blocks(n, indent)
		t.trimNewline()
		t.out.WriteString("</blockquote>")
		t.quote--
	case *ast.List:
		num := n.Start
		for i, c := 0, n.FirstChild(); c != nil; i, c = i+1, c.NextSibling() {
			if i > 0 {
				if n.IsTight {
					t.out.WriteString("\n" + indent)
				} else {
					t.out.WriteString("\n\n" + indent)
				}
			}
			mark := "• "
			if n.IsOrdered() {
				mark = strconv.Itoa(num) + ". "
				num++
			}
			t.out.WriteString(mark)
			t.blocks(c, indent+strings.Repeat(" ", utf8.RuneCountInString(mark)))
		}
	case *east.Table:
		t.table(n)
	default:
		// A block of a kind this renderer does not know: its text, escaped.
		if n.Type() == ast.TypeBlock && n.HasChildren() {
			t.blocks(n, indent)
		} else {
			t.lines(n, indent)
		}
	}
}

// trimNewline drops a newline the output ends with (a block's last line keeps none).
func (t *tg) trimNewline() {
	s := t.out.String()
	if strings.HasSuffix(s, "\n") {
		t.out.Reset()
		t.out.WriteString(strings.TrimRight(s, "\n"))
	}
}

// lines writes a block's raw lines (code, raw HTML) escaped, without the last newline.
func (t *tg) lines(n ast.Node, indent string) {
	ls := n.Lines()
	var b bytes.Buffer
	for i := 0; i < ls.Len(); i++ {
		seg := ls.At(i)
		b.Write(seg.Value(t.src))
	}
	v := bytes.TrimRight(b.Bytes(), "\n")
	if indent != "" {
		v = bytes.ReplaceAll(v, []byte("\n"), []byte("\n"+indent))
	}
	t.esc(v)
}

// pre writes body in a pre, unless a link is open (which may hold no pre): then as text.
func (t *tg) pre(body func()) {
	if t.link > 0 {
		body()
		return
	}
	t.out.WriteString("<pre>")
	body()
	t.out.WriteString("</pre>")
}

// wrap writes body inside the tag, unless the same tag is already open.
func (t *tg) wrap(tag string, depth *int, body func()) {
	if *depth > 0 {
		body()
		return
	}
	*depth++
	t.out.WriteString("<" + tag + ">")
	body()
	t.out.WriteString("</" + tag + ">")
	*depth--
}

// inlines writes n's inline children; a line break continues at indent.
func (t *tg) inlines(n ast.Node, indent string) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		t.inline(c, indent)
	}
}

// inline writes one inline node.
func (t *tg) inline(n ast.Node, indent string) {
	switch n := n.(type) {
	case *ast.Text:
		if n.IsRaw() {
			t.esc(n.Segment.Value(t.src))
		} else {
			t.text(n.Segment.Value(t.src))
		}
		if n.SoftLineBreak() || n.HardLineBreak() {
			t.out.WriteString("\n" + indent)
		}
	case *ast.String:
		if n.IsCode() || n.IsRaw() {
			t.esc(n.Value)
		} else {
			t.text(n.Value)
		}
	case *ast.CodeSpan:
		var b bytes.Buffer
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if tx, ok := c.(*ast.Text); ok {
				v := tx.Segment.Value(t.src)
				if bytes.HasSuffix(v, []byte("\n")) {
					v = append(v[:len(v)-1:len(v)-1], ' ')
				}
				b.Write(v)
			}
		}
		if t.link > 0 {
			t.esc(b.Bytes())
			return
		}
		t.out.WriteString("<code>")
		t.esc(b.Bytes())
		t.out.WriteString("</code>")
	case *ast.Emphasis:
		if n.Level >= 2 {
			t.wrap("b", &t.bold, func() { t.inlines(n, indent) })
		} else {
			t.wrap("i", &t.italic, func() { t.inlines(n, indent) })
		}
	case *east.Strikethrough:
		t.wrap("s", &t.strike, func() { t.inlines(n, indent) })
	case *ast.Link:
		t.anchor(n.Destination, func() {
			if n.HasChildren() {
				t.inlines(n, indent)
			} else {
				t.text(n.Destination)
			}
		})
	case *ast.AutoLink:
		label := n.Label(t.src)
		if n.AutoLinkType != ast.AutoLinkURL {
			t.esc(label)
			return
		}
		t.anchor(n.URL(t.src), func() { t.esc(label) })
	case *ast.Image:
		// Telegram shows no picture in a text message: the image's description stands.
		t.inlines(n, indent)
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			t.esc(seg.Value(t.src))
		}
	case *east.TaskCheckBox:
		if n.IsChecked {
			t.out.WriteString("☑ ")
		} else {
			t.out.WriteString("☐ ")
		}
	default:
		if n.HasChildren() {
			t.inlines(n, indent)
		} else {
			t.lines(n, indent)
		}
	}
}

// anchor writes body as a link to dest when dest is an absolute http or https address and no
// link is open; otherwise body alone (and, for a link with no text, its address as text).
func (t *tg) anchor(dest []byte, body func()) {
	href, ok := safeHref(dest)
	if !ok || t.link > 0 {
		body()
		return
	}
	t.link++
	t.out.WriteString(`<a href="`)
	t.esc([]byte(href))
	t.out.WriteString(`">`)
	body()
	t.out.WriteString("</a>")
	t.link--
}

// safeHref returns dest as a link Telegram may open: an absolute http or https address with
// a host, percent-escaped as goldmark escapes links. Anything else is refused.
func safeHref(dest []byte) (string, bool) {
	esc := string(util.URLEscape(dest, true))
	u, err := url.Parse(esc)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return "", false
	}
	lower := strings.ToLower(esc)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		return "", false
	}
	return strings.ToLower(u.Scheme) + esc[len(u.Scheme):], true
}

// table writes a table as the text of a pre: its cells' text in columns padded with spaces,
// a rule under the header.
func (t *tg) table(n *east.Table) {
	var rows [][]string
	header := -1
	for r := n.FirstChild(); r != nil; r = r.NextSibling() {
		if _, ok := r.(*east.TableHeader); ok {
			header = len(rows)
		}
		var cells []string
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, strings.ReplaceAll(plain(c, t.src), "\n", " "))
		}
		rows = append(rows, cells)
	}
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for ri, r := range rows {
		if ri > 0 {
			b.WriteString("\n")
		}
		var line strings.Builder
		for i, c := range r {
			if i > 0 {
				line.WriteString("  ")
			}
			line.WriteString(c)
			if i < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		if ri == header {
			total := 0
			for i, w := range widths {
				if i > 0 {
					total += 2
				}
				total += w
			}
			b.WriteString("\n" + strings.Repeat("-", total))
		}
	}
	t.pre(func() { t.esc([]byte(b.String())) })
}

// plain is the text of n's inlines with their marks dropped (a table cell in a pre can hold
// no entity).
func plain(n ast.Node, src []byte) string {
	var b strings.Builder
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				v := c.Segment.Value(src)
				if !c.IsRaw() {
					v = unmark(v)
				}
				b.Write(v)
				if c.SoftLineBreak() || c.HardLineBreak() {
					b.WriteString(" ")
				}
			case *ast.String:
				b.Write(c.Value)
			case *ast.AutoLink:
				b.Write(c.Label(src))
			case *ast.RawHTML:
				for i := 0; i < c.Segments.Len(); i++ {
					seg := c.Segments.At(i)
					b.Write(seg.Value(src))
				}
			case *east.TaskCheckBox:
				if c.IsChecked {
					b.WriteString("☑ ")
				} else {
					b.WriteString("☐ ")
				}
			default:
				walk(c)
			}
		}
	}
	walk(n)
	return b.String()
}
