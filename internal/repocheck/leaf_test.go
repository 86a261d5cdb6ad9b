package repocheck

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// leaves are the packages that import no buddi package, and why.
var leaves = map[string]string{
	"core/events": "the catalogue of event kinds and payloads: every package that records or reads events imports it",
	"plugins":     "the plugin contract: plugins and core both import it, and it imports neither",
	"sandbox":     "the sandbox: its launcher runs in every binary that links it, before the rest of the binary, and must not pull buddi in with it",
}

// TestLeavesImportNoBuddiPackage fails on a non-test file of a leaf package that imports a
// buddi package.
func TestLeavesImportNoBuddiPackage(t *testing.T) {
	root := moduleRoot(t)
	for dir, why := range leaves {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, dir, e.Name()), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				if p := strings.Trim(imp.Path.Value, `"`); p == "buddi" || strings.HasPrefix(p, "buddi/") {
					t.Errorf("%s/%s imports %s: %s is a leaf (%s)", dir, e.Name(), p, dir, why)
				}
			}
		}
	}
}
