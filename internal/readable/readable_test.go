package readable

import (
	"strings"
	"testing"
)

// limit is the text bound the tests read with, far above what they hold.
const limit = 1 << 20

// The title comes only from what the extractor keeps: a <title> inside an svg, a template,
// a noscript or a hidden element is dropped with it, and the first heading stands in.
func TestTheTitleIsNotTakenFromDroppedContent(t *testing.T) {
	for _, doc := range []string{
		`<html><body><svg><title>IGNORE-SVG</title></svg><h1>Real</h1><p>x</p></body></html>`,
		`<html><body><template><title>IGNORE-TEMPLATE</title></template><h1>Real</h1><p>x</p></body></html>`,
		`<html><body><div hidden><title>IGNORE-HIDDEN</title></div><h1>Real</h1><p>x</p></body></html>`,
		`<html><body><nav><title>IGNORE-NAV</title></nav><h1>Real</h1><p>x</p></body></html>`,
		`<html><body><math><title>IGNORE-MATH</title></math><h1>Real</h1><p>x</p></body></html>`,
	} {
		ex, err := HTML(doc, limit)
		if err != nil {
			t.Fatal(err)
		}
		if ex.Title != "Real" || strings.Contains(ex.Text, "IGNORE") {
			t.Errorf("%s\ntitle %q, text %q", doc, ex.Title, ex.Text)
		}
	}
	ex, _ := HTML(`<html><head><title>Head title</title></head><body><svg><title>IGNORE</title></svg><p>x</p></body></html>`, limit)
	if ex.Title != "Head title" {
		t.Errorf("title %q", ex.Title)
	}
}

// Inline styles that hide an element hide it however they are written; styles that do not
// hide it (a small font, a half opacity) keep its text.
func TestHiddenByStyleHoweverWritten(t *testing.T) {
	for _, style := range []string{
		"display:none", "DISPLAY : NONE", "display:none !important", "color:red;display:none", "visibility:hidden", "visibility: collapse",
		"font-size:0", "font-size: 0px", "font-size:0.0em", "font-size:0%", "opacity:0", "opacity: 0.0", "opacity:.0", "opacity:0%", "opacity:0 !important",
	} {
		ex, _ := HTML(`<p>seen</p><p style="`+style+`">IGNORE-HIDDEN</p>`, limit)
		if ex.Text != "seen" {
			t.Errorf("style %q: text %q", style, ex.Text)
		}
	}
	for _, style := range []string{"font-size:0.5em", "font-size: 0.8rem", "opacity:0.5", "opacity: 0.9;", "display:block", "font-size:10px"} {
		ex, _ := HTML(`<p>seen</p><p style="`+style+`">shown</p>`, limit)
		if ex.Text != "seen\n\nshown" {
			t.Errorf("style %q: text %q", style, ex.Text)
		}
	}
}

// Page chrome marked by its ARIA role is chrome as much as nav, header, footer and aside.
func TestChromeByRoleIsDropped(t *testing.T) {
	doc := `<div role="navigation">IGNORE-NAV</div><div role="banner">IGNORE-BANNER</div><main><p>body</p></main>` +
		`<div role="complementary">IGNORE-ASIDE</div><div role="contentinfo">IGNORE-FOOTER</div>`
	ex, _ := HTML(doc, limit)
	if ex.Text != "body" {
		t.Errorf("text %q", ex.Text)
	}
}

// Reveal marks every character a reader cannot see, from the ways text has been hidden from
// people and shown to models: tag characters spelling a message, runs of variation selectors
// carrying bytes, zero-width spaces, direction overrides, a carriage return that hides a line
// on a terminal. Writing that needs an invisible character keeps it: an emoji sequence, a
// Persian word, a Hindi conjunct.
func TestRevealMarksWhatAReaderCannotSee(t *testing.T) {
	tags := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			b.WriteRune(0xE0000 + r)
		}
		return b.String()
	}
	for _, tt := range []struct{ in, want string }{
		{"Lunch at noon." + tags("send keys"), "Lunch at noon.‹U+E0073›‹U+E0065›‹U+E006E›‹U+E0064›‹U+E0020›‹U+E006B›‹U+E0065›‹U+E0079›‹U+E0073›"},
		{"ok😀\uFE00\uFE01\uFE02", "ok😀\uFE00‹U+FE01›‹U+FE02›"},
		{"a\U000E0100\U000E0101", "a\U000E0100‹U+E0101›"},
		{"\uFE0Fstart", "‹U+FE0F›start"},
		{"pay\u200bpal", "pay‹U+200B›pal"},
		{"invoice\u202Efdp.exe", "invoice‹U+202E›fdp.exe"},
		{"rm -rf ~\rls", "rm -rf ~‹U+000D›ls"},
		{"line\r\nnext", "line\r\nnext"},
		{"a\u2066b\u2069c\u061Cd\u200Ee\u200Ff", "a‹U+2066›b‹U+2069›c‹U+061C›d‹U+200E›e‹U+200F›f"},
		{"soft\u00ADhyphen\uFEFFbom\u2062x", "soft‹U+00AD›hyphen‹U+FEFF›bom‹U+2062›x"},
		{"hangul\u3164filler\u034Fcgj", "hangul‹U+3164›filler‹U+034F›cgj"},
		{"latin\u200Cjoiner\u200Dword", "latin‹U+200C›joiner‹U+200D›word"},
		{"e\u0301\u200Cx", "e\u0301‹U+200C›x"},
		{"\u200Dedge\u200C", "‹U+200D›edge‹U+200C›"},
		{"bell\x07nul\x00", "bell‹U+0007›nul‹U+0000›"},
		{"при\u200dвет 中\u200d文\u200c字 안\u200c녕", "при‹U+200D›вет 中‹U+200D›文‹U+200C›字 안‹U+200C›녕"},
		{"a\u2065b\U000E0200c\uFFF0d", "a‹U+2065›b‹U+E0200›c‹U+FFF0›d"},
		{"🏴\U000E0068\U000E0069\U000E007F flag-shaped", "🏴‹U+E0068›‹U+E0069›‹U+E007F› flag-shaped"},
		{"🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E0074\U000E007F", "🏴‹U+E0067›‹U+E0062›‹U+E0073›‹U+E0063›‹U+E0074›‹U+E0074›‹U+E007F›"},
		// Writing that uses invisible characters keeps them.
		{"🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F Scotland", "🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F Scotland"},
		{"🙂\u200D↔\uFE0F", "🙂\u200D↔\uFE0F"},
		{"ഫോണ്\u200D വിളി", "ഫോണ്\u200D വിളി"},
		{"ᠬᠠᠷ\u180Eᠠ", "ᠬᠠᠷ\u180Eᠠ"},
		{"👨\u200D👩\u200D👧 family", "👨\u200D👩\u200D👧 family"},
		{"❤\uFE0F\u200D🔥 and 👍🏽", "❤\uFE0F\u200D🔥 and 👍🏽"},
		{"می\u200Cخواهم", "می\u200Cخواهم"},
		{"क्\u200Dष", "क्\u200Dष"},
		{"tab\tand\nline", "tab\tand\nline"},
		{"plain text", "plain text"},
	} {
		got := Reveal(tt.in)
		if got != tt.want {
			t.Errorf("Reveal(%+q)\n got %+q\nwant %+q", tt.in, got, tt.want)
		}
		if again := Reveal(got); again != got {
			t.Errorf("Reveal is not idempotent on %+q: %+q", got, again)
		}
		rs := []rune(got)
		for i := range rs {
			if Hidden(rs, i) {
				t.Errorf("Reveal(%+q) still hides %U", tt.in, rs[i])
			}
		}
	}
}

// Clean takes out what Reveal would mark, and keeps what it keeps.
func TestCleanTakesOutWhatIsHidden(t *testing.T) {
	for in, want := range map[string]string{
		"Lunch\U000E0073\U000E0065 at\u200B noon": "Lunch at noon",
		"👨\u200D👩\u200D👧":                         "👨\u200D👩\u200D👧",
		"می\u200Cخواهم":                           "می\u200Cخواهم",
		"a\u00A0b\u2003c":                         "a b c",
		"bad\xffbyte":                             "badbyte",
		"one\r\ntwo\r":                            "one\ntwo",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%+q) = %+q, want %+q", in, got, want)
		}
	}
}

// Runs of joiners and selectors next to one another are read without going round in a circle.
func TestJoinersAndSelectorsInRuns(t *testing.T) {
	for _, in := range []string{"a\u200D\u200Db", "ب\u200C\uFE0F", "ب\u200C\u200Cب", "👨\u200D\uFE0F\u200D👩", "😀\uFE0F\u200D\uFE0F\u200D😀", "ب\u034F\u200Cب"} {
		out := Reveal(in)
		rs := []rune(out)
		for i := range rs {
			if Hidden(rs, i) {
				t.Errorf("Reveal(%+q) = %+q hides %U", in, out, rs[i])
			}
		}
	}
	if got := Reveal("ب\u200C\u200Cب"); got != "ب‹U+200C›‹U+200C›ب" {
		t.Errorf("two non-joiners: %+q", got)
	}
}

// Text hidden by the page's own style sheet is hidden as much as text hidden inline: a class,
// an id or an element type whose rule hides it (display, visibility, a zero size or opacity,
// or a position far off the screen), in any <style> of the page, inside @media too. Rules
// that hide nothing, or hide only on a pseudo-class, leave the text.
func TestHiddenByTheStyleSheet(t *testing.T) {
	doc := `<html><head><style>
/* a comment {display:none} */
.x-hide { display : none }
#secret{visibility:hidden}
p.tiny, .zero { font-size: 0 }
.away { position: absolute; left: -10000px; }
@media screen { .later { opacity: 0 } }
.shown { color: red } .hover:hover { display: none } .a .b { display: none }
</style></head><body>
<p>one</p><p class="x-hide">IGNORE-CLASS</p><div id="secret">IGNORE-ID</div>
<p class="tiny">IGNORE-TAGCLASS</p><span class="zero">IGNORE-ZERO</span><p class="note away">IGNORE-AWAY</p>
<p class="later">IGNORE-MEDIA</p><p class="shown">two</p><p class="hover">three</p><p class="b">four</p>
</body></html>`
	ex, err := HTML(doc, limit)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Text != "one\n\ntwo\n\nthree\n\nfour" {
		t.Errorf("text %q", ex.Text)
	}
}

// A later or more specific rule that shows what a rule hid wins, as in the page: the active
// tab of a set whose panes are hidden is read, the others are not.
func TestTheStyleSheetCascades(t *testing.T) {
	doc := `<style>.tab-pane{display:none}.tab-pane.active{display:block}
.note{visibility:hidden} .note{visibility:visible}
#x{display:none} .y{display:block}</style>
<div class="tab-pane active">shown tab</div><div class="tab-pane">IGNORE-TAB</div>
<p class="note">shown note</p><p id="x" class="y">IGNORE-ID-WINS</p>`
	ex, err := HTML(doc, limit)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Text != "shown tab\n\nshown note" {
		t.Errorf("text %q", ex.Text)
	}
}

// A page is read as a desk's screen shows it: what it hides only when printed, or only on a
// narrow screen (the mobile rules of a responsive mail), is read; what it hides on a wide
// screen is not. A media query written without a space after @media is read as any other.
func TestPrintOnlyRulesHideNothingOnScreen(t *testing.T) {
	doc := `<style>@media print { .screen { display: none } } @media(min-width:600px){.wide{display:none}}
@media only screen and (max-width:600px) { .hide-mobile { display: none !important } }
@media screen and (min-width: 40em), print { .big { visibility: hidden } }
@media not print { .paper { display: none } }</style>
<p class="screen">on screen</p><p class="hide-mobile">on a desk</p><p class="wide">IGNORE-WIDE</p><p class="big">IGNORE-BIG</p><p class="paper">IGNORE-PAPER</p>`
	ex, err := HTML(doc, limit)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Text != "on screen\n\non a desk" {
		t.Errorf("text %q", ex.Text)
	}
}

// An !important declaration beats a more specific one, as in the page; a rule repeated many
// times is one rule, its latest writing deciding.
func TestImportantAndRepeatedRules(t *testing.T) {
	doc := `<style>.x{display:none!important} p.x{display:block}` + strings.Repeat("p.y{opacity:1}", 5000) + `p.y{opacity:0}</style>` +
		`<p>seen</p><p class="x">IGNORE-IMPORTANT</p><p class="y">IGNORE-LATEST</p><p class="x" style="display:block">IGNORE-INLINE-NOT-IMPORTANT</p>`
	ex, err := HTML(doc, limit)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Text != "seen" {
		t.Errorf("text %q", ex.Text)
	}
}
