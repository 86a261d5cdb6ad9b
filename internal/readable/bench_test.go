package readable

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkHTML reads a page of 2,000 paragraphs, with no style sheet and with one of 500
// rules that hide or show, the size of a framework's utility classes.
func BenchmarkHTML(b *testing.B) {
	var body strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&body, `<p class="c%d note">Paragraph %d of the page, with a few words in it.</p>`, i%700, i)
	}
	var css strings.Builder
	for i := range 500 {
		if i%2 == 0 {
			fmt.Fprintf(&css, ".c%d{display:none}", i)
		} else {
			fmt.Fprintf(&css, ".c%d.note{display:block;color:red}", i)
		}
	}
	hostile := "<style>" + strings.Repeat("p{opacity:1}", 16000) + strings.Repeat(".c.d{display:none}.c", 4000) + "{color:red}</style>" +
		strings.Repeat(`<p class="c e">x</p>`, 16000)
	for _, tt := range []struct{ name, doc string }{
		{"hostile sheet", hostile},
		{"no sheet", "<html><body>" + body.String() + "</body></html>"},
		{"500 rules", "<html><head><style>" + css.String() + "</style></head><body>" + body.String() + "</body></html>"},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(tt.doc)))
			for b.Loop() {
				if _, err := HTML(tt.doc, 1<<20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
