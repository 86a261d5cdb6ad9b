package web

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
		hostile, "", "<", "<script>", "<!--", "<p>a<script>b</script>c</p>",
		"<svg><script>x</script></svg>", "<table><script>x</script><tr><td>y",
		"<title><script>t</script></title>", "<noscript><p>a</p></noscript>",
		"<pre>  a\n  b </pre>", "<a href='http://x.example/(y)'>z</a>", "\xff\xfe<p>\u202ex</p>",
		"<div hidden><p>h</p></div>", "<plaintext><script>p", "<!-- <script> --> q",
	} {
		f.Add(s, s)
	}
	const limit = 2000
	const marker = "QQSCRIPTMARKQQ"
	f.Fuzz(func(t *testing.T, before, after string) {
		for _, doc := range []string{before, after, before + after} {
			ex, err := ExtractHTML(doc, limit)
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
		ex, err := ExtractHTML(doc, limit)
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
	if len(ex.Text) > limit || len(ex.Title) > maxTitle {
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
