// Package readable turns text a stranger wrote (a web page, a mail's HTML or plain part, a
// header) into what a reader of it sees: the readable text of an HTML document, without
// script, styling, chrome, hidden elements or attributes, and every text without the
// characters a reader cannot see (controls, zero-width and direction marks, tag characters).
// The web plugin reads pages with it and the email plugin reads mail with it, so text hidden
// from a person reaches a model by neither.
package readable

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// MaxTitle bounds a page's title, in bytes.
const MaxTitle = 300

// dropped are the elements whose whole subtree never reaches the text: code, styling,
// pictures, embedded documents, form controls and the page's chrome (navigation, header,
// footer, sidebars).
var dropped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Svg: true, atom.Math: true, atom.Noscript: true,
	atom.Template: true, atom.Iframe: true, atom.Frame: true, atom.Frameset: true, atom.Object: true,
	atom.Embed: true, atom.Canvas: true, atom.Audio: true, atom.Video: true, atom.Picture: true,
	atom.Head: true, atom.Nav: true, atom.Header: true, atom.Footer: true, atom.Aside: true,
	atom.Form: true, atom.Button: true, atom.Select: true, atom.Textarea: true, atom.Input: true,
	atom.Dialog: true, atom.Menu: true,
}

// blocks are the elements that end a line of text before and after them.
var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true,
	atom.Blockquote: true, atom.Pre: true, atom.Table: true, atom.Tr: true, atom.Ul: true,
	atom.Ol: true, atom.Dl: true, atom.Dt: true, atom.Dd: true, atom.Figure: true,
	atom.Figcaption: true, atom.Hr: true, atom.Address: true, atom.Details: true,
	atom.Summary: true, atom.Caption: true, atom.Body: true, atom.Html: true,
}

// headings are h1 to h6 and their level.
var headings = map[atom.Atom]int{atom.H1: 1, atom.H2: 2, atom.H3: 3, atom.H4: 4, atom.H5: 5, atom.H6: 6}

// Extracted is a page's readable text.
type Extracted struct {
	Title     string // the page's <title>, or its first heading
	Text      string // headings, paragraphs, list items and links' text, one block a paragraph
	Truncated bool   // the text was cut at the limit
}

// HTML reads the readable text of an HTML document, at most limit bytes of it. It
// drops script, style, svg, noscript, template, iframe and the rest of [dropped], the page's
// chrome (head, nav, header, footer, aside, and their ARIA roles), elements marked hidden,
// HTML comments with their contents, and every attribute (a link keeps its text, not its
// href). White space is collapsed; invisible characters (controls, zero-width and direction
// marks, tag characters) are removed. The one document it refuses is one nested deeper than
// the parser reads (512 elements).
func HTML(doc string, limit int) (Extracted, error) {
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		return Extracted{}, err
	}
	w := &writer{limit: limit, sheet: readSheet(root)}
	title := findTitle(root, w.sheet)
	w.walk(root, 0)
	text, cut := w.finish()
	if title == "" {
		title = w.firstHeading
	}
	return Extracted{Title: title, Text: text, Truncated: cut}, nil
}

// Plain is the readable form of a text/plain body: its lines with invisible characters
// removed, runs of blank lines made one, at most limit bytes.
func Plain(body string, limit int) Extracted {
	w := &writer{limit: limit}
	for line := range strings.Lines(body) {
		if strings.TrimSpace(Clean(line)) == "" {
			w.paragraph()
			continue
		}
		w.text(line)
		w.newline()
	}
	text, cut := w.finish()
	return Extracted{Text: text, Truncated: cut}
}

// findTitle returns the document's <title> text, collapsed and bounded: the first <title>
// outside what the walk drops (svg, math, template, noscript, chrome, hidden elements), so a
// title cannot bring dropped content back.
func findTitle(n *html.Node, sh sheet) string {
	switch {
	case n.Type == html.ElementNode && n.DataAtom == atom.Title && n.Namespace == "" && !hidden(n) && !sh.hides(n):
		var b strings.Builder
		for c := range n.Descendants() {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		return Bound(Collapse(Clean(b.String())), MaxTitle)
	case n.Type == html.ElementNode && n.DataAtom != atom.Head && skipped(n, sh):
		return ""
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := findTitle(c, sh); t != "" {
			return t
		}
	}
	return ""
}

// skipped reports whether the walk leaves an element and everything in it out: dropped by
// its type, hidden inline or by the page's style sheet, or the page's chrome.
func skipped(n *html.Node, sh sheet) bool {
	return dropped[n.DataAtom] || n.Namespace != "" || hidden(n) || sh.hides(n) || chrome(n)
}

// writer gathers the text of a walk: lines of collapsed text, blocks separated by a blank
// line, at most limit bytes.
type writer struct {
	limit        int
	b            strings.Builder
	line         strings.Builder // the line being written
	pendingSpace bool
	cut          bool
	firstHeading string
	sheet        sheet // what the page's own style sheet hides
}

// full reports whether the limit is reached.
func (w *writer) full() bool { return w.cut || w.b.Len()+w.line.Len() > w.limit }

func (w *writer) walk(n *html.Node, pre int) {
	if w.full() {
		w.cut = true
		return
	}
	switch n.Type {
	case html.CommentNode, html.DoctypeNode, html.RawNode:
		return
	case html.TextNode:
		if pre > 0 {
			w.preText(n.Data)
		} else {
			w.text(n.Data)
		}
		return
	case html.ElementNode:
		if skipped(n, w.sheet) {
			return
		}
	}
	a := n.DataAtom
	switch {
	case n.Type != html.ElementNode:
		w.children(n, pre)
	case headings[a] > 0:
		w.paragraph()
		w.line.WriteString(strings.Repeat("#", headings[a]) + " ")
		w.children(n, pre)
		if w.firstHeading == "" && headings[a] == 1 {
			w.firstHeading = Bound(strings.TrimSpace(strings.TrimLeft(w.line.String(), "#")), MaxTitle)
		}
		w.paragraph()
	case a == atom.Li:
		w.newline()
		w.line.WriteString("- ")
		w.children(n, pre)
		w.newline()
	case a == atom.Br:
		w.newline()
	case a == atom.Td || a == atom.Th:
		w.space()
		w.children(n, pre)
		w.space()
	case a == atom.Pre:
		w.paragraph()
		w.children(n, pre+1)
		w.paragraph()
	case a == atom.A:
		// A link is its text: its href is an attribute, dropped with the rest.
		w.children(n, pre)
	case a == atom.Img:
		// Pictures have no text here: their alt attribute is an attribute, and dropped.
	case blocks[a]:
		w.paragraph()
		w.children(n, pre)
		w.paragraph()
	default:
		w.children(n, pre)
	}
}

func (w *writer) children(n *html.Node, pre int) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c, pre)
	}
}

// text adds s with its white space collapsed. Text nodes next to each other join without a
// space unless one of them has white space at the seam ("bold" + "er" is "bolder").
func (w *writer) text(s string) {
	s = Clean(s)
	if s == "" {
		return
	}
	if startsWithSpace(s) {
		w.pendingSpace = true
	}
	for _, f := range strings.Fields(s) {
		if w.pendingSpace {
			w.sep()
		}
		w.line.WriteString(f)
		w.pendingSpace = true
	}
	w.pendingSpace = endsWithSpace(s)
}

// sep writes one space unless the line is empty or already ends in one.
func (w *writer) sep() {
	l := w.line.String()
	if l != "" && !strings.HasSuffix(l, " ") {
		w.line.WriteByte(' ')
	}
	w.pendingSpace = false
}

// space asks for a space before the next text.
func (w *writer) space() { w.pendingSpace = true }

// preText adds preformatted text: its lines kept, each line's spaces collapsed.
func (w *writer) preText(s string) {
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			w.newline()
		}
		w.text(line)
	}
}

// newline ends the current line.
func (w *writer) newline() {
	l := strings.TrimSpace(w.line.String())
	w.line.Reset()
	w.pendingSpace = false
	if strings.Trim(l, "#- ") == "" { // nothing but a heading's or an item's mark
		return
	}
	w.b.WriteString(l)
	w.b.WriteByte('\n')
}

// paragraph ends the current line and leaves one blank line after the text so far.
func (w *writer) paragraph() {
	w.newline()
	s := w.b.String()
	if s != "" && !strings.HasSuffix(s, "\n\n") {
		w.b.WriteByte('\n')
	}
}

// finish returns the text, cut at the limit on a rune boundary.
func (w *writer) finish() (string, bool) {
	w.newline()
	text := strings.TrimSpace(w.b.String())
	if len(text) > w.limit {
		text = strings.TrimSpace(Bound(text, w.limit))
		w.cut = true
	}
	return text, w.cut
}

// hidden reports whether an element is marked as not shown: the hidden attribute,
// aria-hidden="true", or an inline style that hides it (display none, visibility hidden or
// collapse, a font size or an opacity of zero, however written, or a position far off the
// screen). Such text is what a page
// shows a model and not a reader.
func hidden(n *html.Node) bool {
	for _, at := range n.Attr {
		switch strings.ToLower(at.Key) {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(strings.TrimSpace(at.Val), "true") {
				return true
			}
		case "style":
			if hidingStyle(at.Val) {
				return true
			}
		}
	}
	return false
}

// hidingStyle reports whether an inline style's declarations hide the element.
func hidingStyle(style string) bool {
	for _, d := range declarations(style) {
		if d.hides {
			return true
		}
	}
	return false
}

// say is what one declaration says of whether its element is shown.
type say struct {
	prop      string
	hides     bool
	important bool // written !important
}

// declarations reads CSS declarations ("display: none; color: red") into what they say of
// whether the element is shown: display (none hides), visibility (hidden or collapse),
// font-size and opacity (zero, however written), and a left, top, right, margin or
// text-indent far off the screen. Other properties say nothing and are left out.
func declarations(style string) []say {
	var out []say
	for _, decl := range strings.Split(strings.ToLower(style), ";") {
		prop, val, ok := strings.Cut(decl, ":")
		if !ok {
			continue
		}
		prop = strings.TrimSpace(prop)
		val = strings.TrimSpace(val)
		important := strings.HasSuffix(val, "!important")
		val = strings.TrimSpace(strings.TrimSuffix(val, "!important"))
		switch prop {
		case "display":
			out = append(out, say{prop, val == "none", important})
		case "visibility":
			out = append(out, say{prop, val == "hidden" || val == "collapse", important})
		case "font-size", "opacity":
			out = append(out, say{prop, zeroLength(val), important})
		case "left", "top", "right", "margin-left", "margin-top", "text-indent":
			out = append(out, say{prop, offscreen(prop, val), important})
		}
	}
	return out
}

// zeroLength reports whether a CSS value is the number zero, with or without a unit
// (0, 0.0, .0, 0px, 0em, 0%).
func zeroLength(val string) bool {
	num := strings.TrimRightFunc(val, func(r rune) bool { return r >= 'a' && r <= 'z' || r == '%' })
	num = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(num, "+"), "-"))
	if num == "" || strings.Trim(num, "0.") != "" || strings.Count(num, ".") > 1 {
		return false
	}
	return strings.Contains(num, "0")
}

// chromeRoles are the ARIA landmark roles of a page's chrome: what nav, header, footer and
// aside are by element.
var chromeRoles = map[string]bool{"navigation": true, "banner": true, "contentinfo": true, "complementary": true}

// chrome reports whether an element is page chrome by its role.
func chrome(n *html.Node) bool {
	for _, at := range n.Attr {
		if strings.EqualFold(at.Key, "role") {
			for _, r := range strings.Fields(strings.ToLower(at.Val)) {
				if chromeRoles[r] {
					return true
				}
			}
		}
	}
	return false
}

// Clean removes what a reader cannot see ([Hidden]) and invalid UTF-8, and makes every
// space other than a line end or a tab a plain space. Taking a character out can leave
// another without what made it visible (a variation selector with nothing before it), so it
// repeats until nothing hidden is left.
func Clean(s string) string {
	s = strings.ToValidUTF8(s, "")
	for {
		out := cleanOnce(s)
		if out == s {
			return out
		}
		s = out
	}
}

func cleanOnce(s string) string {
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range rs {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r' && i+1 < len(rs) && rs[i+1] == '\n': // a CRLF line end is a line end
		case Hidden(rs, i):
		case unicode.IsSpace(r):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Reveal is s with every character a reader cannot see ([Hidden]) written as a visible mark,
// ‹U+200B›, and everything else as it is. What the owner approves is shown with it, so no text
// rides along unseen: not a line hidden by a carriage return, not a word reversed by a
// direction override, not a message spelt in tag characters or variation selectors.
func Reveal(s string) string {
	rs := []rune(s)
	hidden := false
	for i := range rs {
		if Hidden(rs, i) {
			hidden = true
			break
		}
	}
	if !hidden {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i, r := range rs {
		if Hidden(rs, i) {
			fmt.Fprintf(&b, "‹U+%04X›", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Hidden reports whether rs[i] is a character a reader of the text cannot see, or one that
// changes how the text around it reads without showing itself:
//   - control characters, but a line end, a tab, and a carriage return before a line end;
//   - format characters (Unicode's Cf: zero-width spaces, direction marks, overrides and
//     isolates, the byte order mark, the soft hyphen, tag characters, invisible operators), but
//     a zero-width joiner or non-joiner where a script or an emoji sequence uses one: between
//     two letters or marks of which one is not Latin, or a joiner between two emoji;
//   - a variation selector that does not follow a visible character directly (a second
//     selector in a row selects nothing and can only carry hidden data);
//   - the fillers and inherent vowels that draw nothing (Hangul fillers, the combining
//     grapheme joiner, Khmer's two invisible vowels).
func Hidden(rs []rune, i int) bool {
	r := rs[i]
	switch {
	case r == '\n' || r == '\t':
		return false
	case r == '\r':
		return i+1 >= len(rs) || rs[i+1] != '\n'
	case unicode.IsControl(r):
		return true
	case r == 0x200C || r == 0x200D:
		return !joins(rs, i)
	case r >= 0xE0020 && r <= 0xE007F:
		return !inFlag(rs, i)
	case r == 0x180E: // the Mongolian vowel separator, between Mongolian letters
		return i == 0 || i+1 >= len(rs) || !unicode.Is(unicode.Mongolian, rs[i-1]) || !unicode.Is(unicode.Mongolian, rs[i+1])
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
		return true
	case selector(r):
		if i == 0 {
			return true
		}
		p := rs[i-1]
		return selector(p) || !unicode.IsGraphic(p) || unicode.IsSpace(p) || Hidden(rs, i-1)
	}
	return filler(r)
}

// filler reports whether r is one of the characters that draw nothing though Unicode counts
// them letters or marks: the Hangul fillers, the combining grapheme joiner, and Khmer's two
// inherent vowels.
func filler(r rune) bool {
	switch r {
	case 0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0:
		return true
	}
	return false
}

// selector reports whether r is a variation selector (the Mongolian free variation selectors
// among them).
func selector(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF || r >= 0x180B && r <= 0x180D || r == 0x180F
}

// joiningScripts are the scripts whose writing uses the zero-width joiner and non-joiner to
// shape its letters: Arabic and its kin, Mongolian, and the Brahmic scripts of South and
// Southeast Asia. Elsewhere (Latin, Cyrillic, Greek, Han, Hangul…) they change nothing a
// reader sees, and could only carry text unseen.
var joiningScripts = []*unicode.RangeTable{
	unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mandaic, unicode.Mongolian,
	unicode.Devanagari, unicode.Bengali, unicode.Gurmukhi, unicode.Gujarati, unicode.Oriya,
	unicode.Tamil, unicode.Telugu, unicode.Kannada, unicode.Malayalam, unicode.Sinhala,
	unicode.Myanmar, unicode.Khmer, unicode.Tibetan, unicode.Thaana,
}

// joins reports whether the zero-width joiner or non-joiner at rs[i] stands where writing uses
// one: between two letters or marks, one of them of a script that shapes with it (Persian,
// Arabic, the Indic scripts), or after such a script's virama at the end of a syllable, or,
// for a joiner, between two emoji (a family, a flag with a rainbow, a head shaking).
func joins(rs []rune, i int) bool {
	if i == 0 {
		return false
	}
	p := rs[i-1]
	// Neither neighbour may itself be hidden, and none of these ever is (a selector or a
	// filler is no letter here), so the test does not go round in a circle.
	letter := func(r rune) bool { return (unicode.IsLetter(r) || unicode.IsMark(r)) && !selector(r) && !filler(r) }
	shaped := func(r rune) bool { return unicode.In(r, joiningScripts...) }
	if unicode.Is(unicode.Mn, p) && shaped(p) && (i+1 >= len(rs) || !letter(rs[i+1]) || shaped(rs[i+1])) {
		return true // after a virama: a half form, a chillu
	}
	if i+1 >= len(rs) {
		return false
	}
	n := rs[i+1]
	if letter(p) && letter(n) && (shaped(p) || shaped(n)) {
		return true
	}
	emoji := func(r rune) bool {
		return unicode.Is(unicode.So, r) || unicode.Is(unicode.Sk, r) || r >= 0x2190 && r <= 0x21FF
	}
	return rs[i] == 0x200D && (emoji(p) || p == 0xFE0F && !Hidden(rs, i-1)) && emoji(n)
}

// flagTags are the tag sequences of the three flags Unicode recommends (England, Scotland,
// Wales), each after a black flag and ended by the cancel tag.
var flagTags = []string{"gbeng", "gbsct", "gbwls"}

// inFlag reports whether the tag character at rs[i] is part of one of those flags: any other
// run of tag characters spells text no reader sees.
func inFlag(rs []rune, i int) bool {
	start := i
	for start > 0 && rs[start-1] >= 0xE0020 && rs[start-1] <= 0xE007F {
		start--
	}
	if start == 0 || rs[start-1] != 0x1F3F4 {
		return false
	}
	for _, tag := range flagTags {
		end := start + len(tag)
		if end >= len(rs) || rs[end] != 0xE007F || i > end {
			continue
		}
		match := true
		for k, c := range tag {
			if rs[start+k] != 0xE0000+c {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// Collapse makes every run of white space one space and trims the ends.
func Collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// Bound cuts s to at most n bytes, on a rune boundary.
func Bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func startsWithSpace(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && unicode.IsSpace(r)
}

func endsWithSpace(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && unicode.IsSpace(r)
}
