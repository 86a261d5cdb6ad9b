package telegram

import (
	"fmt"
	"strings"
	"testing"
)

func TestRenderHTML(t *testing.T) {
	for md, want := range map[string]string{
		"**Done.** The `a < b` check passes.":   "<b>Done.</b> The <code>a &lt; b</code> check passes.",
		"See [the docs](https://example.com/x)": `See <a href="https://example.com/x">the docs</a>`,
		"a _light_ touch":                       "a <i>light</i> touch",
		"snake_case_name stays":                 "snake_case_name stays",
		"<script>alert(1)</script>":             "&lt;script&gt;alert(1)&lt;/script&gt;",
		"```go\nif a < b {}\n```":               "<pre>if a &lt; b {}</pre>",
		"[x](javascript:alert(1))":              "[x](javascript:alert(1))",
		"## Plan":                               "<b>Plan</b>",
		"**unclosed bold":                       "**unclosed bold",
	} {
		if got := renderHTML(md); got != want {
			t.Errorf("%q:\n got %q\nwant %q", md, got, want)
		}
	}
}

// The rendering never leaves a tag open and never lets the model's text make one.
func FuzzRenderHTML(f *testing.F) {
	for _, s := range []string{"**a**", "`x`", "```\ny\n```", "[a](https://b)", "<b>", "_i_", "**`a`**", "\x00" + "0" + "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		out := renderHTML(md)
		for _, tag := range []string{"b", "i", "code", "pre", "a"} {
			open := strings.Count(out, "<"+tag+">") + strings.Count(out, "<"+tag+" ")
			if tag == "a" {
				open = strings.Count(out, "<a href=")
			}
			if open != strings.Count(out, "</"+tag+">") {
				t.Fatalf("unbalanced <%s> in %q from %q", tag, out, md)
			}
		}
		if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(
			strings.ReplaceAll(out, "<b>", ""), "</b>", ""), "<i>", ""), "</i>", ""), "<code>", ""), "</code>", ""), "<script") {
			t.Fatalf("a tag of the model's survived: %q", out)
		}
	})
}

// Many code spans and blocks in one message each come back in place (their placeholders are
// numbered in decimal, which neither escaping nor the Markdown rules touch).
func TestRenderManyCodeSpans(t *testing.T) {
	var md, want strings.Builder
	for i := range 60 {
		fmt.Fprintf(&md, "`c%d` ", i)
		fmt.Fprintf(&want, "<code>c%d</code> ", i)
	}
	for i := range 15 {
		fmt.Fprintf(&md, "\n```\nb%d\n```\n", i)
		fmt.Fprintf(&want, "\n<pre>b%d</pre>\n", i)
	}
	if got := renderHTML(md.String()); got != want.String() {
		t.Fatalf("got  %q\nwant %q", got, want.String())
	}
}
