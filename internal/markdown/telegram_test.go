package markdown

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
)

func TestTelegramRendersMarkdown(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"**Done.** The `a < b` check passes.", "<b>Done.</b> The <code>a &lt; b</code> check passes."},
		{"a _light_ touch and *this*", "a <i>light</i> touch and <i>this</i>"},
		{"~~gone~~", "<s>gone</s>"},
		{"***both***", "<i><b>both</b></i>"},
		{"## Plan\n\nfirst", "<b>Plan</b>\n\nfirst"},
		{"Title\n=====", "<b>Title</b>"},
		{"- one\n- two\n  - nested\n- three", "• one\n• two\n  • nested\n• three"},
		{"3. c\n4. d", "3. c\n4. d"},
		{"1. a\n2. b\n\n   more of b\n3. c", "1. a\n\n2. b\n\n   more of b\n\n3. c"},
		{"- [x] done\n- [ ] not yet", "• ☑ done\n• ☐ not yet"},
		{"> quoted **bold**\n> > and nested", "<blockquote>quoted <b>bold</b>\n\nand nested</blockquote>"},
		{"```go\nif a < b {}\n```", "<pre>if a &lt; b {}</pre>"},
		{"    indented code", "<pre>indented code</pre>"},
		{"| a | bb |\n|---|---|\n| 1 | **2** |", "<pre>a  bb\n-----\n1  2</pre>"},
		{"See [the docs](https://example.com/x)", `See <a href="https://example.com/x">the docs</a>`},
		{"see https://example.com now", `see <a href="https://example.com">https://example.com</a> now`},
		{"at www.example.org", `at <a href="http://www.example.org">www.example.org</a>`},
		{"[**bold `code`**](https://x.example/a?q=\"c\")", `<a href="https://x.example/a?q=%22c%22"><b>bold code</b></a>`},
		{"[ref]\n\n[ref]: https://r.example", `<a href="https://r.example">ref</a>`},
		{"[](https://x.example)", `<a href="https://x.example">https://x.example</a>`},
		{"![a chart](https://x.example/p.png)", "a chart"},
		{"line one\nline two  \nline three", "line one\nline two\nline three"},
		{"a\n\n---\n\nb", "a\n\n———\n\nb"},
		{"&amp; &copy; &#65; \\*not em\\*", "&amp; © A *not em*"},
		{"1 < 2 & 3 > 2", "1 &lt; 2 &amp; 3 &gt; 2"},
		{"snake_case_name stays", "snake_case_name stays"},
		{"**unclosed bold", "**unclosed bold"},
		{"<b>raw</b> tags are text", "&lt;b&gt;raw&lt;/b&gt; tags are text"},
		{"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"<div>\nblock\n</div>\n\nafter", "&lt;div&gt;\nblock\n&lt;/div&gt;\n\nafter"},
		{"[x](javascript:alert(1))", "x"},
		{"", ""},
	} {
		if got := Telegram(c.in); got != c.want {
			t.Errorf("Telegram(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// Whatever the model writes, Telegram gets only its own subset: no other tag, no link but
// http and https, every tag closed and none where Telegram refuses it.
func TestTelegramHostileInputIsInert(t *testing.T) {
	for _, in := range []string{
		"<script>alert(1)</script>",
		"hello <script src=//evil.example/x.js></script> there",
		"[click](javascript:alert(1))",
		"[click](JaVaScRiPt:alert(1))",
		"[click](java\tscript:alert(1))",
		"[click](&#106;avascript:alert(1))",
		"[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
		"[file](file:///etc/passwd)",
		"[tg](tg://resolve?domain=x)",
		"[rel](/relative/path)",
		"[proto](//evil.example/x)",
		"[mail](mailto:a@b.example)",
		"[quote](https://ok.example/\"><script>x</script>)",
		"[quote](<https://ok.example/\" onclick=\"x>)",
		"[ws](https://ok.example/a b)",
		"![img](javascript:alert(1))",
		`<img src=x onerror="alert(1)">`,
		`<a href="https://ok.example" onclick="alert(1)">x</a>`,
		`<a href="javascript:alert(1)">x</a>`,
		`<tg-spoiler>x</tg-spoiler> <span class="tg-spoiler">y</span>`,
		`<tg-emoji emoji-id="1">x</tg-emoji>`,
		"```\n</pre><b>x\n```",
		"`</code><a href=\"https://evil.example\">x`",
		"<!-- <b> -->",
		"&lt;b&gt; &#60;i&#62; &#x3c;s&#x3e; &quot;",
		"**[`a`](https://x.example) *[b](https://y.example)***",
		"> > > deep\n> > quote",
		"> ```\n> code in quote\n> ```",
		"[a [b](https://inner.example)](https://outer.example)",
		"[https://inner.example](https://outer.example)",
		"| <b> | [x](https://x.example) |\n|---|---|\n| `c` | **d** |",
		"- > quote in list\n  > ```\n  > code\n  > ```",
		"\x00 nul",
	} {
		assertTelegram(t, in, Telegram(in))
	}
}

// FuzzTelegram holds the same for any input.
func FuzzTelegram(f *testing.F) {
	for _, s := range []string{"**a**", "`x`", "```\ny\n```", "[a](https://b.example)", "<b>", "_i_", "**`a`**",
		"> q\n> > r", "- a\n  1. b", "| a |\n|---|\n| <b onclick=x> |", "- [x] done", "[a](javascript:x)", "www.x.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		assertTelegram(t, in, Telegram(in))
	})
}

var (
	tgTag    = regexp.MustCompile(`<[^>]*>`)
	tgHref   = regexp.MustCompile(`^<a href="([^"<>]*)">$`)
	tgEntity = regexp.MustCompile(`&(lt|gt|amp|quot);`)
	// tgHolds says which entities an entity may hold: bold, italic, strike and underline any;
	// a link and a quote the text styles (a quote also code and pre); code and pre nothing.
	tgHolds = map[string]map[string]bool{
		"b": {"i": true, "s": true, "u": true, "a": true, "code": true, "pre": true, "blockquote": true},
		"i": {"b": true, "s": true, "u": true, "a": true, "code": true, "pre": true, "blockquote": true},
		"s": {"b": true, "i": true, "u": true, "a": true, "code": true, "pre": true, "blockquote": true},
		"u": {"b": true, "i": true, "s": true, "a": true, "code": true, "pre": true, "blockquote": true},
		"a": {"b": true, "i": true, "s": true, "u": true}, "code": {}, "pre": {},
		"blockquote": {"b": true, "i": true, "s": true, "u": true, "a": true, "code": true, "pre": true},
	}
)

// assertTelegram checks out, rendered from in, against Telegram's HTML mode: only its tags,
// each closed in order, none nested where Telegram refuses it, links to http(s) only, and
// no &, < or > in the text but as the entities Telegram knows.
func assertTelegram(t *testing.T, in, out string) {
	t.Helper()
	var open []string
	for _, loc := range tgTag.FindAllStringIndex(out, -1) {
		tag := out[loc[0]:loc[1]]
		name := strings.Trim(tag, "</>")
		switch {
		case strings.HasPrefix(tag, "</"):
			if len(open) == 0 || open[len(open)-1] != name {
				t.Fatalf("Telegram(%q) closes %s, which is not the open tag (%v): %q", in, tag, open, out)
			}
			open = open[:len(open)-1]
			continue
		case strings.HasPrefix(tag, "<a "):
			m := tgHref.FindStringSubmatch(tag)
			if m == nil {
				t.Fatalf("Telegram(%q) writes the link tag %s: %q", in, tag, out)
			}
			href := strings.ReplaceAll(m[1], "&amp;", "&")
			u, err := url.Parse(href)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
				!(strings.HasPrefix(href, "http://") || strings.HasPrefix(href, "https://")) {
				t.Fatalf("Telegram(%q) links to %q: %q", in, href, out)
			}
			name = "a"
		case tgHolds[name] == nil:
			t.Fatalf("Telegram(%q) writes the tag %s: %q", in, tag, out)
		}
		for _, o := range open {
			if o == name {
				t.Fatalf("Telegram(%q) nests <%s> in itself: %q", in, name, out)
			}
		}
		if len(open) > 0 && !tgHolds[open[len(open)-1]][name] {
			t.Fatalf("Telegram(%q) puts <%s> in <%s>: %q", in, name, open[len(open)-1], out)
		}
		if name == "blockquote" && len(open) > 0 {
			t.Fatalf("Telegram(%q) puts a quote inside <%s>: %q", in, open[len(open)-1], out)
		}
		open = append(open, name)
	}
	if len(open) > 0 {
		t.Fatalf("Telegram(%q) leaves %v open: %q", in, open, out)
	}
	text := tgEntity.ReplaceAllString(tgTag.ReplaceAllString(out, ""), "")
	if strings.ContainsAny(text, "<>&") {
		t.Fatalf("Telegram(%q) leaves a bare <, > or & in its text: %q", in, out)
	}
}
