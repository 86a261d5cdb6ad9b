package sandbox

import (
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// The sandbox is a leaf: its launcher runs in every binary that links it, before the rest of
// the binary, and must not pull buddi in with it.
func TestSandboxImportsNoBuddiPackage(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), e.Name(), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p := strings.Trim(imp.Path.Value, `"`); p == "buddi" || strings.HasPrefix(p, "buddi/") {
				t.Errorf("%s imports %s: the sandbox must stay a leaf", e.Name(), p)
			}
		}
	}
}
