package views

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// TextRows is how many rows, pairs or points a view degraded to text keeps.
const TextRows = 15

// textLines is how many lines of a document, diff or terminal text it keeps.
const textLines = 40

// Text degrades v for a surface without a canvas (Telegram, the terminal): a table as
// aligned lines, a record or a series as "key: value" lines, a diff or terminal text as a
// code block, a document as its opening lines, each shortened with a line saying how much
// was left out. fence marks code blocks with ``` (Telegram's Markdown); without it the
// block is indented by two spaces (the terminal). "" when v is nil.
func Text(v *View, fence bool) string {
	if v == nil {
		return ""
	}
	var b strings.Builder
	if v.Title != "" {
		b.WriteString(v.Title + "\n")
	}
	code := func(lang string, lines []string) {
		if fence {
			b.WriteString("```" + lang + "\n")
			for _, l := range lines {
				b.WriteString(strings.ReplaceAll(l, "```", "ˋˋˋ") + "\n")
			}
			b.WriteString("```\n")
			return
		}
		for _, l := range lines {
			b.WriteString("  " + l + "\n")
		}
	}
	more := func(n int, what string) {
		if n > 0 {
			fmt.Fprintf(&b, "(%d more %s not shown)\n", n, what)
		}
	}
	switch v.Renderer {
	case Table:
		rows := v.Rows
		if len(rows) > TextRows {
			rows = rows[:TextRows]
		}
		code("", aligned(v.Columns, rows))
		more(len(v.Rows)-len(rows), "rows")
	case KeyValue:
		n := min(len(v.Pairs), TextRows)
		for _, p := range v.Pairs[:n] {
			b.WriteString(p.Key + ": " + p.Value + "\n")
		}
		more(len(v.Pairs)-n, "keys")
	case Timeseries, Bars:
		n := min(len(v.Points), TextRows)
		var rows [][]string
		for _, p := range v.Points[:n] {
			rows = append(rows, []string{p.Label, p.Value})
		}
		code("", aligned(nil, rows))
		more(len(v.Points)-n, "points")
	case Diff, Terminal, Document:
		lines := strings.Split(strings.TrimRight(v.Text, "\n"), "\n")
		shown := lines
		if len(shown) > textLines {
			shown = shown[:textLines]
		}
		if v.Renderer == Document {
			b.WriteString(strings.Join(shown, "\n") + "\n")
		} else {
			lang := ""
			if v.Renderer == Diff {
				lang = "diff"
			}
			code(lang, shown)
		}
		more(len(lines)-len(shown), "lines")
	case Image:
		b.WriteString("(an image, shown on the dashboard)\n")
	case Preview:
		b.WriteString(v.URL + "\n")
		if v.Text != "" {
			b.WriteString(v.Text + "\n")
		}
	case Envelope:
		b.WriteString(v.Text + "\n")
	default:
		code("", strings.Split(string(v.Value), "\n"))
	}
	return strings.TrimRight(b.String(), "\n")
}

// aligned lays rows out in columns padded to their widest cell, under a header when there
// is one; a cell is cut at 40 characters and a line break in it becomes a space.
func aligned(header []string, rows [][]string) []string {
	all := rows
	if len(header) > 0 {
		all = append([][]string{header}, rows...)
	}
	norm := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		if utf8.RuneCountInString(s) > 40 {
			s = string([]rune(s)[:39]) + "…"
		}
		return s
	}
	var width []int
	for _, r := range all {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(norm(c)))
		}
	}
	var out []string
	for _, r := range all {
		var l strings.Builder
		for i, c := range r {
			c = norm(c)
			l.WriteString(c)
			if i < len(r)-1 {
				l.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+2))
			}
		}
		out = append(out, strings.TrimRight(l.String(), " "))
	}
	return out
}
