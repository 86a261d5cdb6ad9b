package plugins_test

import (
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// The contract is a leaf: plugins and core both import it, and it imports neither.
func TestContractImportsNoBuddiPackage(t *testing.T) {
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
				t.Errorf("%s imports %s: the contract must stay a leaf", e.Name(), p)
			}
		}
	}
}
