package web

import (
	"regexp"
	"strings"
	"testing"
)

// The canvas draws shapes, never domains: no renderer in canvas.js knows what mail, a
// calendar or a repository is, so a plugin's data is drawn by its descriptor and nothing
// in the page. It builds with dom.js's h(), never with markup.
func TestCanvasIsGeneric(t *testing.T) {
	b, err := FS.ReadFile("canvas.js")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.ToLower(string(b))
	domain := []string{"email", "e-mail", "mail", "inbox", "calendar", "event", "invoice", "payment", "price", "currency",
		"github", "repository", "commit", "pull request", "issue", "weather", "contact", "meeting", "ticket", "developer", "memory"}
	for _, w := range domain {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(w) + `s?\b`).MatchString(src) {
			t.Errorf("canvas.js names the domain word %q; the canvas draws shapes only", w)
		}
	}
	for _, bad := range []string{"innerhtml", "outerhtml", "insertadjacenthtml", "document.write", "eval(", "new function"} {
		if strings.Contains(src, bad) {
			t.Errorf("canvas.js uses %s; draw with dom.js's h()", bad)
		}
	}
	for _, r := range []string{"timeseries", "table", "bars", "keyvalue", "document", "diff", "terminal", "image", "preview", "envelope", "structured"} {
		if !strings.Contains(src, "'"+r+"'") {
			t.Errorf("canvas.js does not know the renderer %s", r)
		}
	}
}
