package readable

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzExtract: no input panics the extractor; its text and title stay within their bounds,
// are valid UTF-8 and hold no control character but line ends; and what a script element
// holds never reaches the text, whatever HTML follows it.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		"<html><head><title>t</title></head><body><nav>n</nav><p>a <b>b</b></p><svg><text>s</text></svg></body></html>", "", "<", "<script>", "<!--", "<p>a<script>b</script>c</p>",
		"<svg><script>x</script></svg>", "<table><script>x</script><tr><td>y",
		"<title><script>t</script></title>", "<noscript><p>a</p></noscript>",
		"<pre>  a\n  b </pre>", "<a href='http://x.example/(y)'>z</a>", "\xff\xfe<p>\u202ex</p>",
		"<div hidden><p>h</p></div>", "<plaintext><script>p", "<!-- <script> --> q",
		"<style>.a{display:none}</style><p class=a>x</p>", "<style>@media{.b{opacity:0}}}}{{</style><p class=b>y",
		"<style>/* {display:none} */ p#i.c.d, .e{left:-9999px}</style><p id=i class='c d'>z", "<style>@font-face{a{b}}.f{",
	} {
		f.Add(s, s)
	}
	const limit = 2000 // shadows the package's: a small bound, so cutting is fuzzed too
	const marker = "QQSCRIPTMARKQQ"
	f.Fuzz(func(t *testing.T, before, after string) {
		for _, doc := range []string{before, after, before + after} {
			ex, err := HTML(doc, limit)
			if err != nil {
				continue // nested too deep: refused, not read
			}
			check(t, doc, ex, limit)
		}
		// Text before the script cannot change how it is read (no markup in it).
		before = strings.ReplaceAll(before, "<", "")
		if strings.Contains(before+after, marker[2:12]) {
			return
		}
		doc := before + "<script>if (a <script" + marker + ") {}</script>" + after
		ex, err := HTML(doc, limit)
		if err != nil {
			return
		}
		check(t, doc, ex, limit)
		if strings.Contains(ex.Text, marker) || strings.Contains(ex.Title, marker) {
			t.Fatalf("a script's text reached the output of %q:\n%s", doc, ex.Text)
		}
		if strings.Contains(ex.Text, "<script"+marker) {
			t.Fatalf("'<script' from a script element in the text of %q", doc)
		}
	})
}

func check(t *testing.T, doc string, ex Extracted, limit int) {
	t.Helper()
	if len(ex.Text) > limit || len(ex.Title) > MaxTitle {
		t.Fatalf("%q: text %d bytes, title %d bytes", doc, len(ex.Text), len(ex.Title))
	}
	for _, s := range []string{ex.Text, ex.Title} {
		if !utf8.ValidString(s) {
			t.Fatalf("%q: invalid UTF-8 out: %q", doc, s)
		}
		for _, r := range s {
			if r != '\n' && (unicode.IsControl(r) || r >= 0x202A && r <= 0x202E) {
				t.Fatalf("%q: control %U in %q", doc, r, s)
			}
		}
	}
	if strings.Contains(ex.Title, "\n") {
		t.Fatalf("%q: title on two lines", doc)
	}
}

// FuzzReveal: whatever the text, what Reveal returns hides nothing, reads the same revealed
// again, and loses no visible character; what Clean returns hides nothing.
func FuzzReveal(f *testing.F) {
	for _, s := range []string{"", "a\u200bb", "\U000E0041\U000E0042", "😀\uFE00\uFE01", "x\r", "\r\n", "👨\u200D👩", "می\u200Cخواهم", "\u200D", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Reveal(s)
		if Reveal(out) != out {
			t.Fatalf("Reveal(%+q) = %+q is revealed again differently", s, out)
		}
		for _, text := range []string{out, Clean(s)} {
			rs := []rune(text)
			for i := range rs {
				if Hidden(rs, i) {
					t.Fatalf("%+q still hides %U at %d (from %+q)", text, rs[i], i, s)
				}
			}
		}
		var kept strings.Builder
		rs := []rune(s)
		for i, r := range rs {
			if !Hidden(rs, i) {
				kept.WriteRune(r)
			}
		}
		if !strings.Contains(s, "‹") && string([]rune(stripMarks(out))) != kept.String() {
			t.Fatalf("Reveal(%+q) = %+q changed what was visible (%+q)", s, out, kept.String())
		}
	})
}

// stripMarks takes Reveal's ‹U+…› marks out of s.
func stripMarks(s string) string {
	for {
		i := strings.Index(s, "‹U+")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], "›")
		s = s[:i] + s[i+j+len("›"):]
	}
}
