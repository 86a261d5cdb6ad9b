// Package markdown turns an agent's Markdown into HTML that is safe to insert into a page: it
// is rendered by goldmark (CommonMark with GitHub's tables, strikethrough and autolinks) and
// then kept to an allowlist by bluemonday, so no script, event handler, style or link to
// anything but http, https and mailto survives, whatever the model wrote.
package markdown

import (
	"bytes"
	stdhtml "html"
	"regexp"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
)

// renderer is goldmark without raw HTML: a tag in the text is left out by the renderer, and
// the policy below would drop it anyway.
var renderer = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify, extension.TaskList),
	goldmark.WithRendererOptions(html.WithHardWraps()),
)

// policy is the allowlist: text formatting, lists, quotes, code, tables and links. Nothing
// else passes; links open in a new tab without telling the target where they came from.
var policy = func() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "hr", "strong", "em", "b", "i", "del", "s", "code", "pre", "blockquote",
		"ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
		"table", "thead", "tbody", "tr", "th", "td")
	p.AllowAttrs("href").OnElements("a")
	p.AllowURLSchemes("http", "https", "mailto")
	p.RequireParseableURLs(true)
	p.AllowRelativeURLs(false)
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[\w+-]{1,32}$`)).OnElements("code")
	p.AllowAttrs("start").Matching(bluemonday.Integer).OnElements("ol")
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").Matching(regexp.MustCompile(`^$|^checked$|^disabled$`)).OnElements("input")
	return p
}()

// HTML renders md as sanitised HTML. Text that is not Markdown comes back as paragraphs of
// escaped text; it never fails (a rendering error, which goldmark does not produce for text in
// memory, yields the text escaped).
func HTML(md string) string {
	var buf bytes.Buffer
	if err := renderer.Convert([]byte(md), &buf); err != nil {
		return "<p>" + stdhtml.EscapeString(md) + "</p>"
	}
	return policy.Sanitize(buf.String())
}
