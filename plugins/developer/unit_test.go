package developer

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestGitignore(t *testing.T) {
	t.Parallel()
	var ig ignores
	ig.add(parseIgnore(".", []byte(strings.Join([]string{
		"# a comment",
		"",
		"*.log",
		"!keep.log",
		"build/",
		"/root-only.txt",
		"docs/*.tmp",
		"**/cache",
		"deep/**",
		"a/**/z",
		"trailing\\ ",
		"spaces   ",
		"[!x]y.txt",
		"\\#hash",
	}, "\n"))))
	ig.add(parseIgnore("sub", []byte("local.txt\n!*.log\n")))
	tests := []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"x.log", false, true},
		{"src/x.log", false, true},
		{"keep.log", false, false},
		{"build", true, true},
		{"build", false, false}, // a file named build: the pattern is for directories
		{"src/build", true, true},
		{"root-only.txt", false, true},
		{"src/root-only.txt", false, false},
		{"docs/a.tmp", false, true},
		{"docs/x/a.tmp", false, false},
		{"x/docs/a.tmp", false, false},
		{"cache", true, true},
		{"a/b/cache", false, true},
		{"deep", true, false},
		{"deep/x", false, true},
		{"a/z", false, true},
		{"a/b/c/z", false, true},
		{"trailing ", false, true},
		{"trailing", false, false},
		{"spaces", false, true},
		{"ay.txt", false, true},
		{"xy.txt", false, false},
		{"#hash", false, true},
		{"sub/local.txt", false, true},
		{"local.txt", false, false},
		{"sub/x.log", false, false}, // re-included by the deeper file
		{"other/x.log", false, true},
		{"main.go", false, false},
	}
	for _, tt := range tests {
		if got := ig.ignored(tt.path, tt.isDir); got != tt.want {
			t.Errorf("ignored(%q, dir %v) = %v, want %v", tt.path, tt.isDir, got, tt.want)
		}
	}
}

// applyDiff rebuilds the new side from the old side and a diff, checking that every kept
// and removed line is the old side's.
func applyDiff(t *testing.T, a []string, ops []diffOp) []string {
	t.Helper()
	var out []string
	i := 0
	for _, op := range ops {
		switch op.kind {
		case ' ', '-':
			if i >= len(a) || a[i] != op.text {
				t.Fatalf("op %q does not match old line %d", op.text, i)
			}
			i++
			if op.kind == ' ' {
				out = append(out, op.text)
			}
		case '+':
			out = append(out, op.text)
		}
	}
	if i != len(a) {
		t.Fatalf("the diff used %d of %d old lines", i, len(a))
	}
	return out
}

// TestLineDiff: the diff of random texts rebuilds the new text, and is the shortest on
// small cases a person can check.
func TestLineDiff(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"a\n", "b\n", "c\n", "d\n", "e"}
	for range 2000 {
		a := make([]string, r.IntN(12))
		b := make([]string, r.IntN(12))
		for i := range a {
			a[i] = words[r.IntN(len(words))]
		}
		for i := range b {
			b[i] = words[r.IntN(len(words))]
		}
		if got := applyDiff(t, a, lineDiff(a, b)); !slices.Equal(got, b) && !(len(got) == 0 && len(b) == 0) {
			t.Fatalf("diff of %q and %q rebuilt %q", a, b, got)
		}
	}
	ops := lineDiff(splitLines("a\nb\nc\n"), splitLines("a\nx\nc\n"))
	if s := stat(ops); s.added != 1 || s.removed != 1 {
		t.Errorf("got %+v", s)
	}
	// Past the edit bound, the middle is replaced whole: still correct.
	var a, b []string
	for i := range 3 * maxDiffEdits {
		a = append(a, fmt.Sprintf("a%d\n", i))
		b = append(b, fmt.Sprintf("b%d\n", i))
	}
	if got := applyDiff(t, a, lineDiff(a, b)); !slices.Equal(got, b) {
		t.Error("the bounded diff does not rebuild the new text")
	}
}

func TestUnified(t *testing.T) {
	t.Parallel()
	old := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n"
	new := "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\nseventeen"
	got := unified("f.txt", lineDiff(splitLines(old), splitLines(new)))
	want := "--- a/f.txt\n+++ b/f.txt\n" +
		"@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n" +
		"@@ -14,3 +14,4 @@\n 14\n 15\n 16\n+seventeen\n\\ No newline at end of file"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	var many strings.Builder
	for i := range 2 * maxDiffLines {
		fmt.Fprintf(&many, "%d\n", i)
	}
	long := unified("f", lineDiff(nil, splitLines(many.String())))
	if n := strings.Count(long, "\n"); n > maxDiffLines+3 || !strings.Contains(long, "the diff goes on") || !strings.Contains(long, "+800 −0 lines in all") {
		t.Errorf("the diff is not bounded: %d lines, ends %q", n, long[len(long)-100:])
	}
}

// TestDocComments: every exported name of the package, and every exported field, has a
// doc comment (STYLE: a package whose exported names all say what they are).
func TestDocComments(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			if files[name], err = parser.ParseFile(fset, name, nil, parser.ParseComments); err != nil {
				t.Fatal(err)
			}
		}
	}
	if files["doc.go"] == nil || files["doc.go"].Doc == nil {
		t.Fatal("no package doc in doc.go")
	}
	for name, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && d.Doc == nil && (d.Recv == nil || exportedRecv(d.Recv)) {
					t.Errorf("%s: %s has no doc comment", name, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
							t.Errorf("%s: type %s has no doc comment", name, s.Name.Name)
						}
						if st, ok := s.Type.(*ast.StructType); ok && s.Name.IsExported() {
							for _, fld := range st.Fields.List {
								for _, n := range fld.Names {
									if n.IsExported() && fld.Doc == nil {
										t.Errorf("%s: field %s.%s has no doc comment", name, s.Name.Name, n.Name)
									}
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && s.Doc == nil && d.Doc == nil {
								t.Errorf("%s: %s has no doc comment", name, n.Name)
							}
						}
					}
				}
			}
		}
	}
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(fl *ast.FieldList) bool {
	typ := fl.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}
