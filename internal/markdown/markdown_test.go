package markdown

import (
	"regexp"
	"strings"
	"testing"
)

func TestRendersMarkdown(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"**bold** and _it_", "<p><strong>bold</strong> and <em>it</em></p>"},
		{"- one\n- two", "<ul>\n<li>one</li>\n<li>two</li>\n</ul>"},
		{"`x := 1`", "<p><code>x := 1</code></p>"},
		{"```go\nfunc f() {}\n```", `<pre><code class="language-go">func f() {}`},
		{"[site](https://example.com/a?b=1)", `<a href="https://example.com/a?b=1" rel="nofollow noreferrer noopener" target="_blank">site</a>`},
		{"see https://example.com now", `<a href="https://example.com" rel="nofollow noreferrer noopener" target="_blank">https://example.com</a>`},
		{"| a | b |\n|---|--:|\n| 1 | 2 |", "<td>2</td>"},
		{"~~gone~~", "<del>gone</del>"},
		{"line one\nline two", "line one<br>\nline two"},
		{"1 < 2 & 3 > 2", "<p>1 &lt; 2 &amp; 3 &gt; 2</p>"},
	} {
		if got := HTML(c.in); !strings.Contains(got, c.want) {
			t.Errorf("HTML(%q) = %q, want it to contain %q", c.in, got, c.want)
		}
	}
}

// Whatever the model writes, nothing that runs, loads or styles reaches the page.
func TestHostileInputIsInert(t *testing.T) {
	for _, in := range []string{
		"<script>alert(1)</script>",
		"hello <script src=//evil.example/x.js></script> there",
		"[click](javascript:alert(1))",
		"[click](JaVaScRiPt:alert(1))",
		"[click](java\tscript:alert(1))",
		"[click](&#106;avascript:alert(1))",
		"[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
		"[vb](vbscript:msgbox)",
		"![img](javascript:alert(1))",
		"![track](https://evil.example/pixel.png)",
		`<img src=x onerror="alert(1)">`,
		`<a href="https://ok.example" onclick="alert(1)">x</a>`,
		`<div style="background:url(javascript:alert(1))">x</div>`,
		`<iframe src="https://evil.example"></iframe>`,
		`<svg onload=alert(1)><circle/></svg>`,
		`<form action="https://evil.example"><input name=p></form>`,
		`<style>body{display:none}</style>`,
		`<meta http-equiv="refresh" content="0;url=https://evil.example">`,
		"<a href='https://ok.example' style='position:fixed'>x</a>",
		"```\n</code></pre><script>alert(1)</script>\n```",
		"`<script>alert(1)</script>`",
		"<!-- <script>alert(1)</script> -->",
		"<details open ontoggle=alert(1)>",
		"[x](https://ok.example \"t\" onmouseover=alert(1))",
		"<base href=\"https://evil.example/\">",
		"<object data=\"x.swf\"></object><embed src=x>",
	} {
		got := HTML(in)
		assertInert(t, in, got)
	}
}

var (
	tagRe   = regexp.MustCompile(`(?i)<\s*/?\s*([a-z0-9]+)`)
	attrRe  = regexp.MustCompile(`(?i)\s([a-z-]+)\s*=`)
	allowed = map[string]bool{"p": true, "br": true, "hr": true, "strong": true, "em": true, "b": true, "i": true,
		"del": true, "s": true, "code": true, "pre": true, "blockquote": true, "ul": true, "ol": true, "li": true,
		"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "a": true, "table": true,
		"thead": true, "tbody": true, "tr": true, "th": true, "td": true, "input": true}
	allowedAttr = map[string]bool{"href": true, "rel": true, "target": true, "class": true, "start": true,
		"type": true, "checked": true, "disabled": true}
)

// assertInert checks out, rendered from in, for tags and attributes outside the allowlist and
// for any link that is not http, https or mailto.
func assertInert(t *testing.T, in, out string) {
	t.Helper()
	for _, m := range tagRe.FindAllStringSubmatch(out, -1) {
		if !allowed[strings.ToLower(m[1])] {
			t.Errorf("HTML(%q) keeps the tag <%s>: %q", in, m[1], out)
		}
	}
	for _, tag := range regexp.MustCompile(`<[^>]*>`).FindAllString(out, -1) {
		for _, m := range attrRe.FindAllStringSubmatch(tag, -1) {
			if !allowedAttr[strings.ToLower(m[1])] {
				t.Errorf("HTML(%q) keeps the attribute %s: %q", in, m[1], out)
			}
		}
		if i := strings.Index(tag, `href="`); i >= 0 {
			href := tag[i+len(`href="`):]
			if !strings.HasPrefix(href, "https://") && !strings.HasPrefix(href, "http://") && !strings.HasPrefix(href, "mailto:") {
				t.Errorf("HTML(%q) keeps the link %q: %q", in, href, out)
			}
		}
		if strings.HasPrefix(tag, "<input") && !strings.Contains(tag, `type="checkbox"`) {
			t.Errorf("HTML(%q) keeps an input that is not a task's checkbox: %q", in, out)
		}
	}
}

// FuzzHTML holds the same for any input: only allowlisted tags and attributes, only http,
// https and mailto links.
func FuzzHTML(f *testing.F) {
	for _, s := range []string{"**a**", "<script>x</script>", "[a](javascript:x)", "| a |\n|---|\n| <b onclick=x> |", "- [x] done"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		assertInert(t, in, HTML(in))
	})
}
