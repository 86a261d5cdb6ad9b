package telegram

import (
	"fmt"
	stdhtml "html"
	"regexp"
	"strings"
	"testing"

	"buddi/plugins"
)

func TestRenderHTML(t *testing.T) {
	for md, want := range map[string]string{
		"**Done.** The `a < b` check passes.":   "<b>Done.</b> The <code>a &lt; b</code> check passes.",
		"See [the docs](https://example.com/x)": `See <a href="https://example.com/x">the docs</a>`,
		"a _light_ touch":                       "a <i>light</i> touch",
		"snake_case_name stays":                 "snake_case_name stays",
		"<script>alert(1)</script>":             "&lt;script&gt;alert(1)&lt;/script&gt;",
		"```go\nif a < b {}\n```":               "<pre>if a &lt; b {}</pre>",
		"[x](javascript:alert(1))":              "x",
		"## Plan":                               "<b>Plan</b>",
		"**unclosed bold":                       "**unclosed bold",
		"- one\n- two":                          "• one\n• two",
		"> said":                                "<blockquote>said</blockquote>",
		"~~old~~ new":                           "<s>old</s> new",
		"![](https://x.example/p.png)":          "![](https://x.example/p.png)",
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

// Many code spans and blocks in one message each come back in place.
func TestRenderManyCodeSpans(t *testing.T) {
	var md, want strings.Builder
	for i := range 60 {
		fmt.Fprintf(&md, "`c%d` ", i)
		fmt.Fprintf(&want, "<code>c%d</code> ", i)
	}
	wantS := strings.TrimSpace(want.String())
	for i := range 15 {
		fmt.Fprintf(&md, "\n```\nb%d\n```\n", i)
		wantS += fmt.Sprintf("\n\n<pre>b%d</pre>", i)
	}
	if got := renderHTML(md.String()); got != wantS {
		t.Fatalf("got  %q\nwant %q", got, wantS)
	}
}

// A reply longer than a message is split between paragraphs, and each part, rendered on its
// own, closes every tag it opens and shows no more than a message holds, even when the cut
// falls inside a code block or a table pads its columns.
func TestLongReplyPartsStayBalanced(t *testing.T) {
	var md strings.Builder
	for i := range 40 {
		fmt.Fprintf(&md, "**Step %d.** Run `make %d` and read [the log](https://example.com/%d).\n\n", i, i, i)
	}
	md.WriteString("```\n")
	for i := range 200 {
		fmt.Fprintf(&md, "line %d of a long listing with a < and an & in it\n", i)
	}
	md.WriteString("```\n\n")
	md.WriteString("| a | b |\n|---|---|\n")
	for i := range 300 {
		fmt.Fprintf(&md, "| %d | x |\n", i)
	}
	parts := split(md.String())
	if len(parts) < 3 {
		t.Fatalf("a %d-character reply split into %d parts", len([]rune(md.String())), len(parts))
	}
	for i, p := range parts {
		out := renderHTML(p)
		if n := visibleLen(out); n == 0 || n > MaxMessage {
			t.Errorf("part %d shows %d characters", i, n)
		}
		for _, tag := range []string{"b", "i", "s", "code", "pre", "blockquote"} {
			if o, c := strings.Count(out, "<"+tag+">"), strings.Count(out, "</"+tag+">"); o != c {
				t.Errorf("part %d opens <%s> %d times and closes it %d times: %q", i, tag, o, c, out)
			}
		}
		if o, c := strings.Count(out, "<a href="), strings.Count(out, "</a>"); o != c {
			t.Errorf("part %d opens %d links and closes %d", i, o, c)
		}
	}
}

// Telegram counts what it shows: a tag counts for nothing, an entity for one character.
func TestVisibleLen(t *testing.T) {
	for html, want := range map[string]int{
		"":      0,
		"plain": 5,
		"<b>bold</b> &amp; <a href=\"https://x\">é</a>": 8,
		"&lt;&gt;&quot;": 3,
	} {
		if got := visibleLen(html); got != want {
			t.Errorf("visibleLen(%q) = %d, want %d", html, got, want)
		}
	}
}

// shown is the text Telegram shows for html: its tags dropped, its entities read.
func shown(html string) string {
	return stdhtml.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(html, ""))
}

// A card's preview is what a tool will do: it is shown exactly, no mark of it read as
// Markdown, no backslash dropped, whatever backticks it holds.
func TestCardPreviewShownExactly(t *testing.T) {
	for _, p := range []string{
		`Run grep 'a\.b' *.go _x_ **y** [z](https://e.example)`,
		"- not a list\n# not a heading\n> not a quote\n    four spaces\n&amp; <b>raw</b>",
		"```\nthree backticks\n```\nand ```` four",
	} {
		got := shown(renderHTML(cardText("Run it", p, nil)))
		if want := "Run it\n\n" + p; got != want {
			t.Errorf("preview %q\n shown %q\n  want %q", p, got, want)
		}
	}
	// The summary and the choices are shown as the tool wrote them too.
	summary := "List *.go and *.md in [src](https://e.example) _now_"
	choices := []plugins.Choice{{Name: "glob_mode", Options: []string{"*.go", "**/*.md"}, Default: "*.go"}}
	got := shown(renderHTML(cardText(summary, "", choices)))
	if want := summary + "\n\nChoose glob_mode: *.go / **/*.md (unless you pick, *.go)"; got != want {
		t.Errorf("summary and choices shown %q\n want %q", got, want)
	}
}

// A card drawn again from the text Telegram showed (a pick, a decision) shows that text
// again, not a Markdown reading of it.
func TestLiteralShowsTheSameText(t *testing.T) {
	for _, s := range []string{
		`Run grep 'a\.b' *.go _x_ **y** [z](https://e.example) ~~s~~ \`,
		"Send the mail\n\nTo: ann@example.com\n\n- one\n1. two\n# three\n> four\n---\n<b>&amp;</b> `c`\n\nApproved here.",
	} {
		if got := shown(renderHTML(literal(s))); got != s {
			t.Errorf("literal(%q)\n shown %q", s, got)
		}
	}
}
