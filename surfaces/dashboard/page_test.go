package dashboard_test

import (
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"buddi/web"
)

// The page loads whole: every module and style the page's files import is served (a module
// left off the list broke the page for every owner), and nothing else of the package is.
func TestPageServesEveryModuleItImports(t *testing.T) {
	t.Parallel()
	ts, _ := serve(t)
	imports := regexp.MustCompile(`(?:from|import\()\s*'(/[^']+)'|(?:src|href)="(/[^"]+)"`)
	want := map[string]bool{"/": true}
	for _, name := range []string{"index.html", "app.js", "dom.js", "pages.js", "watch.js", "phone.js", "nav.js", "memory.js"} {
		src, err := fs.ReadFile(web.FS, name)
		if err != nil {
			continue // a page module that is gone imports nothing
		}
		for _, m := range imports.FindAllStringSubmatch(string(src), -1) {
			want[m[1]+m[2]] = true
		}
	}
	if !want["/app.js"] || !want["/dom.js"] {
		t.Fatalf("found the imports %v: the page's files were not read", want)
	}
	for path := range want {
		resp := get(t, ts.URL+path)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s (imported by the page): %s", path, resp.Status)
		}
		if strings.HasSuffix(path, ".js") && !strings.Contains(resp.Header.Get("Content-Type"), "javascript") {
			t.Errorf("GET %s: Content-Type %q, want JavaScript (a module is refused otherwise)", path, resp.Header.Get("Content-Type"))
		}
	}
	for _, path := range []string{"/embed.go", "/web/app.js", "/nothing.js", "/..%2fgo.mod"} {
		resp := get(t, ts.URL+path)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", path, resp.Status)
		}
	}
}
