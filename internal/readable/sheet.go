package readable

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// sheet is the part of a page's own <style> elements that decides whether an element is
// shown: each rule's simple selectors (an element type, a class, an id, or such parts joined,
// as p.note) with the declarations that hide or show (display, visibility, opacity, font
// size, a position off the screen), in the page's order. For each such property the rule
// that wins by specificity, then by order, decides, as in the page; an inline style beats
// them all. A selector with a combinator, a pseudo-class or an attribute is not read: what it
// would hide stays, as it stays for a style the reading does not know.
type sheet struct {
	rules []rule
	// by lists the rules' indexes by one part each selector must find: its first class
	// (".note"), else its id ("#main"), else its element type ("p"), so an element is
	// matched against the few rules that could select it, not all of them.
	by map[string][]int
	// last is where the rule for a selector and property stands: a later rule for the same
	// pair replaces it, so repeating a rule adds no work.
	last map[string]int
	// seen holds each element's answer, asked for the title and again for the text.
	seen map[*html.Node]bool
	// work counts the rules tried against elements; past maxSheetWork the sheet says nothing
	// more, so no page can make reading it slow.
	work *int
	// added counts the rules read, each one's order.
	added int
}

// Bounds on reading a style sheet: the distinct rules kept, the classes of a selector or an
// element considered, and the rules tried against elements in one document.
const (
	maxSheetRules   = 4096
	maxClasses      = 32
	maxSheetWork    = 4 << 20
	maxSelectorPart = 8
)

// rule is one simple selector's say on one property; the one that wins is the most
// important, then the most specific, then the latest (order).
type rule struct {
	sel       simple
	prop      string
	hides     bool
	important bool
	order     int
}

// simple is one simple selector: every part it names must match.
type simple struct {
	tag     string
	id      string
	classes []string
}

// simpleSelector matches what parseSimple reads: an optional element type, then classes and
// ids.
var simpleSelector = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9-]*)?((?:[.#][a-zA-Z0-9_-]+)*)$`)

// readSheet reads every <style> element in the document (in head or body, inside @media,
// @supports, @layer and @container blocks too) into the selectors they hide.
func readSheet(root *html.Node) sheet {
	var css strings.Builder
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && n.DataAtom == atom.Style && n.Namespace == "" {
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.TextNode {
					css.WriteString(c.Data)
					css.WriteByte('\n')
				}
			}
		}
		if css.Len() > 1<<20 { // a megabyte of style is read; the rest is not
			break
		}
	}
	if css.Len() == 0 {
		return sheet{}
	}
	return parseSheet(css.String())
}

// parseSheet reads CSS rules into the simple selectors of those that hide.
func parseSheet(css string) sheet {
	css = withoutComments(css)
	var sh sheet
	for i := 0; i < len(css); {
		j := strings.IndexAny(css[i:], "{}")
		if j < 0 {
			break
		}
		if css[i+j] == '}' { // the end of an @media block
			i += j + 1
			continue
		}
		prelude := strings.TrimSpace(css[i : i+j])
		i += j + 1
		if strings.HasPrefix(prelude, "@") {
			query := strings.ToLower(prelude[1:])
			name := query // the at-rule's name: its letters up to a space or a parenthesis
			if k := strings.IndexFunc(query, func(r rune) bool { return r != '-' && (r < 'a' || r > 'z') }); k >= 0 {
				name = query[:k]
			}
			switch {
			case name == "media" && !onDesktop(query[len(name):]):
				// Rules for print or for a narrow screen: not what a reader at a desk sees.
			case name == "media", name == "supports", name == "layer", name == "container":
				continue // its rules follow, read as any other
			}
			i = skipBlock(css, i) // @font-face, @keyframes and the rest hide nothing
			continue
		}
		end := strings.IndexAny(css[i:], "{}")
		if end < 0 {
			end = len(css) - i
		}
		if i+end < len(css) && css[i+end] == '{' { // nested rules: not read
			i = skipBlock(css, i)
			continue
		}
		decls := css[i : i+end]
		i += end + 1
		says := declarations(decls)
		if len(says) == 0 {
			continue
		}
		for _, sel := range strings.Split(prelude, ",") {
			if s, ok := parseSimple(strings.TrimSpace(sel)); ok {
				for _, d := range says {
					sh.add(sel, rule{sel: s, prop: d.prop, hides: d.hides, important: d.important})
				}
			}
		}
	}
	return sh
}

// desktopWidth is the width of the screen a page is read as shown on, in CSS pixels.
const desktopWidth = 1280

// widthFeature matches a width condition of a media query: (max-width: 600px), (min-width:40em).
var widthFeature = regexp.MustCompile(`\(\s*(min|max)-(?:device-)?width\s*:\s*([0-9.]+)\s*(px|em|rem)?\s*\)`)

// onDesktop reports whether a media query list applies to a screen desktopWidth pixels wide:
// some query in it does not name print alone and has no width condition that excludes that
// width. A query written with not, or with conditions this does not read, is taken to apply.
func onDesktop(list string) bool {
	for _, q := range strings.Split(list, ",") {
		words := strings.Fields(strings.NewReplacer("(", " (", ")", ") ").Replace(q))
		if slices.Contains(words, "not") {
			return true
		}
		if slices.Contains(words, "print") {
			continue
		}
		applies := true
		for _, m := range widthFeature.FindAllStringSubmatch(q, -1) {
			px, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				continue
			}
			if m[3] == "em" || m[3] == "rem" {
				px *= 16
			}
			if m[1] == "max" && px < desktopWidth || m[1] == "min" && px > desktopWidth {
				applies = false
			}
		}
		if applies {
			return true
		}
	}
	return false
}

// add keeps r, written as sel in the sheet, and indexes it: a later rule for the same
// selector and property takes the earlier one's place, and past maxSheetRules distinct ones
// no more are kept.
func (sh *sheet) add(sel string, r rule) {
	if sh.by == nil {
		sh.by, sh.last, sh.seen, sh.work = map[string][]int{}, map[string]int{}, map[*html.Node]bool{}, new(int)
	}
	sh.added++
	r.order = sh.added // the page's order
	key := strings.TrimSpace(sel) + "{" + r.prop
	if i, ok := sh.last[key]; ok {
		sh.rules[i] = r
		return
	}
	if len(sh.rules) >= maxSheetRules {
		return
	}
	index := r.sel.tag
	switch {
	case len(r.sel.classes) > 0:
		index = "." + r.sel.classes[0]
	case r.sel.id != "":
		index = "#" + r.sel.id
	}
	sh.last[key] = len(sh.rules)
	sh.by[index] = append(sh.by[index], len(sh.rules))
	sh.rules = append(sh.rules, r)
}

// skipBlock returns the index just past the } that closes the block whose { ends at i.
func skipBlock(css string, i int) int {
	for depth := 1; i < len(css); i++ {
		switch css[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return len(css)
}

// withoutComments is css with its /* comments */ taken out.
func withoutComments(css string) string {
	var b strings.Builder
	for {
		i := strings.Index(css, "/*")
		if i < 0 {
			b.WriteString(css)
			return b.String()
		}
		b.WriteString(css[:i])
		j := strings.Index(css[i+2:], "*/")
		if j < 0 {
			return b.String()
		}
		b.WriteByte(' ')
		css = css[i+2+j+2:]
	}
}

// parseSimple reads one simple selector, or reports that sel is not one.
func parseSimple(sel string) (simple, bool) {
	m := simpleSelector.FindStringSubmatch(sel)
	if m == nil || sel == "" {
		return simple{}, false
	}
	s := simple{tag: strings.ToLower(m[1])}
	for rest := m[2]; rest != ""; {
		k := strings.IndexAny(rest[1:], ".#") + 1
		if k == 0 {
			k = len(rest)
		}
		part := rest[1:k]
		if rest[0] == '#' {
			if s.id != "" && s.id != part {
				return simple{}, false // two ids select nothing
			}
			s.id = part
		} else {
			s.classes = append(s.classes, part)
		}
		if len(s.classes) > maxSelectorPart {
			return simple{}, false
		}
		rest = rest[k:]
	}
	return s, true
}

// hides reports whether the sheet, with the element's inline style over it, hides n.
func (sh sheet) hides(n *html.Node) bool {
	if len(sh.rules) == 0 || n.Type != html.ElementNode {
		return false
	}
	if h, ok := sh.seen[n]; ok {
		return h
	}
	h := sh.decide(n)
	sh.seen[n] = h
	return h
}

// decide is hides without the remembered answers.
func (sh sheet) decide(n *html.Node) bool {
	var id, style string
	var classes []string
	for _, at := range n.Attr {
		switch strings.ToLower(at.Key) {
		case "id":
			id = at.Val
		case "class":
			classes = strings.Fields(at.Val)
			if len(classes) > maxClasses {
				classes = classes[:maxClasses]
			}
		case "style":
			style = at.Val
		}
	}
	lists := [][]int{sh.by[n.Data]}
	if id != "" {
		lists = append(lists, sh.by["#"+id])
	}
	for _, c := range classes {
		lists = append(lists, sh.by["."+c])
	}
	type winner struct {
		important bool
		spec      [3]int
		order     int
		hides     bool
	}
	beats := func(a, b winner) bool {
		if a.important != b.important {
			return a.important
		}
		if a.spec != b.spec {
			return less(b.spec, a.spec)
		}
		return a.order > b.order
	}
	var won map[string]winner
	for _, list := range lists {
		for _, i := range list {
			if *sh.work >= maxSheetWork {
				return false // the sheet has had its say for this document
			}
			*sh.work++
			r := sh.rules[i]
			if !r.sel.matches(n.Data, id, classes) {
				continue
			}
			w := winner{r.important, r.sel.specificity(), r.order, r.hides}
			if won == nil {
				won = map[string]winner{}
			}
			if old, ok := won[r.prop]; !ok || beats(w, old) {
				won[r.prop] = w
			}
		}
	}
	if won == nil {
		return false // the sheet says nothing of n; its inline style is read by hidden
	}
	for _, d := range declarations(style) {
		if old, ok := won[d.prop]; !ok || !old.important || d.important {
			won[d.prop] = winner{important: d.important, hides: d.hides}
		}
	}
	for _, w := range won {
		if w.hides {
			return true
		}
	}
	return false
}

// specificity is the selector's (ids, classes, types), compared in that order.
func (s simple) specificity() [3]int {
	sp := [3]int{0, len(s.classes), 0}
	if s.id != "" {
		sp[0] = 1
	}
	if s.tag != "" {
		sp[2] = 1
	}
	return sp
}

// less reports whether specificity a is lower than b.
func less(a, b [3]int) bool {
	for k := range a {
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return false
}

func (s simple) matches(tag, id string, classes []string) bool {
	if s.tag != "" && s.tag != tag || s.id != "" && s.id != id {
		return false
	}
	for _, c := range s.classes {
		found := false
		for _, have := range classes {
			if have == c {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// offscreen reports whether a declaration's value moves an element far off the screen: a
// left, top, right, margin or text-indent of -999px or less (-100 in font or viewport units),
// the way pages hide text from a reader while keeping it in the document.
func offscreen(prop, val string) bool {
	switch prop {
	case "left", "top", "right", "margin-left", "margin-top", "text-indent":
	default:
		return false
	}
	num := strings.TrimRightFunc(val, func(r rune) bool { return r >= 'a' && r <= 'z' || r == '%' })
	unit := val[len(num):]
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil {
		return false
	}
	switch unit {
	case "px", "pt", "":
		return f <= -999
	case "em", "rem", "vw", "vh", "%", "ch", "ex":
		return f <= -100
	}
	return f <= -999
}
