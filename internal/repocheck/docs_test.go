package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// moduleRoot walks up from this package to the directory holding go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}

// TestEveryPackageAndExportedNameIsDocumented fails on a package without a doc comment and
// on an exported top-level name (type, function, method, or a var/const outside a documented
// group) without one.
func TestEveryPackageAndExportedNameIsDocumented(t *testing.T) {
	root := moduleRoot(t)
	dirs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, files := range dirs {
		fset := token.NewFileSet()
		hasDoc := false
		for _, path := range files {
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if f.Doc != nil {
				hasDoc = true
			}
			for _, decl := range f.Decls {
				for _, name := range undocumented(decl) {
					rel, _ := filepath.Rel(root, path)
					t.Errorf("%s: exported %s has no doc comment", rel, name)
				}
			}
		}
		if !hasDoc {
			rel, _ := filepath.Rel(root, dir)
			t.Errorf("package in %s has no package doc comment", rel)
		}
	}
}

func undocumented(decl ast.Decl) []string {
	var out []string
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if d.Name.IsExported() && d.Doc == nil && (d.Recv == nil || exportedRecv(d.Recv)) {
			out = append(out, d.Name.Name)
		}
	case *ast.GenDecl:
		if d.Doc != nil && d.Lparen.IsValid() {
			return nil // a documented group documents its members
		}
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() && d.Doc == nil && s.Doc == nil {
					out = append(out, s.Name.Name)
				}
				if s.Name.IsExported() {
					out = append(out, undocumentedMembers(s)...)
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() && d.Doc == nil && s.Doc == nil && s.Comment == nil {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	return out
}

func exportedRecv(fl *ast.FieldList) bool {
	if len(fl.List) == 0 {
		return false
	}
	typ := fl.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if idx, ok := typ.(*ast.IndexExpr); ok {
		typ = idx.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}

// undocumentedMembers lists the exported fields of an exported struct and the methods of an
// exported interface that carry neither a doc comment nor a line comment. A field in a group
// that shares one comment (`A, B int // …`) counts as documented.
func undocumentedMembers(s *ast.TypeSpec) []string {
	var fields *ast.FieldList
	switch t := s.Type.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	default:
		return nil
	}
	var out []string
	for _, f := range fields.List {
		if f.Doc != nil || f.Comment != nil {
			continue
		}
		for _, n := range f.Names {
			if n.IsExported() {
				out = append(out, s.Name.Name+"."+n.Name)
			}
		}
	}
	return out
}
