package permission

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestDocumented fails for an exported name of this package without a doc comment, and
// for a package without a package comment.
func TestDocumented(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	hasPackageDoc := false
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			hasPackageDoc = true
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && d.Doc == nil {
					t.Errorf("%s: func %s has no doc comment", fset.Position(d.Pos()), d.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
							t.Errorf("%s: type %s has no doc comment", fset.Position(s.Pos()), s.Name)
						}
						if st, ok := s.Type.(*ast.StructType); ok && s.Name.IsExported() {
							for _, field := range st.Fields.List {
								for _, n := range field.Names {
									if n.IsExported() && field.Doc == nil {
										t.Errorf("%s: field %s.%s has no doc comment", fset.Position(n.Pos()), s.Name, n)
									}
								}
							}
						}
						if it, ok := s.Type.(*ast.InterfaceType); ok && s.Name.IsExported() {
							for _, m := range it.Methods.List {
								for _, n := range m.Names {
									if n.IsExported() && m.Doc == nil {
										t.Errorf("%s: method %s.%s has no doc comment", fset.Position(n.Pos()), s.Name, n)
									}
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && s.Doc == nil && d.Doc == nil {
								t.Errorf("%s: %s has no doc comment", fset.Position(n.Pos()), n)
							}
						}
					}
				}
			}
		}
	}
	if !hasPackageDoc {
		t.Errorf("package permission has no package comment")
	}
}
