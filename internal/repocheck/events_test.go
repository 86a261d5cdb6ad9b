package repocheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const (
	eventlogPath = "buddi/core/eventlog"
	eventsPath   = "buddi/core/events"
)

// catalogue is core/events as its source declares it: the Kind constants, and the payload
// type Payloads pairs with each.
type catalogue struct {
	kinds    map[string]bool   // constant name → declared
	payloads map[string]string // constant name → payload type name
}

// readCatalogue parses core/events for its Kind constants and its Payloads table.
func readCatalogue(t *testing.T, root string) catalogue {
	t.Helper()
	c := catalogue{kinds: map[string]bool{}, payloads: map[string]string{}}
	dir := filepath.Join(root, "core", "events")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Kind" && gd.Tok == token.CONST {
					for _, n := range vs.Names {
						c.kinds[n.Name] = true
					}
				}
				if gd.Tok == token.VAR && len(vs.Names) == 1 && vs.Names[0].Name == "Payloads" && len(vs.Values) == 1 {
					lit, _ := vs.Values[0].(*ast.CompositeLit)
					if lit == nil {
						t.Fatal("core/events: Payloads is not a composite literal")
					}
					for _, elt := range lit.Elts {
						kv := elt.(*ast.KeyValueExpr)
						key, _ := kv.Key.(*ast.Ident)
						val, _ := kv.Value.(*ast.CompositeLit)
						if key == nil || val == nil {
							t.Fatalf("core/events: Payloads entry %#v is not Kind: Type{}", kv)
						}
						typ, _ := val.Type.(*ast.Ident)
						if typ == nil {
							t.Fatalf("core/events: Payloads[%s] is not a type of the package", key.Name)
						}
						c.payloads[key.Name] = typ.Name
					}
				}
			}
		}
	}
	if len(c.kinds) == 0 || len(c.payloads) == 0 {
		t.Fatal("core/events: no Kind constants or no Payloads table found")
	}
	return c
}

// TestEventsAreRecordedWithDeclaredKinds fails on a call of eventlog.Append or
// (*eventlog.Recorder).Record, anywhere in the module but core/eventlog itself, whose kind is
// not a constant of core/events (a string literal compiles, since Kind is a string type), or
// a local variable assigned nothing but such constants; and on a payload given as a map
// literal, or as an events payload type that Payloads does not pair with the kind.
func TestEventsAreRecordedWithDeclaredKinds(t *testing.T) {
	root := moduleRoot(t)
	cat := readCatalogue(t, root)
	calls := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") || rel == filepath.Join("core", "eventlog") {
				return filepath.SkipDir // the log itself is tested with kinds of its own
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		chk := eventCheck{cat: cat, eventlog: importName(f, eventlogPath), events: importName(f, eventsPath)}
		for _, decl := range f.Decls {
			ast.Inspect(decl, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				kindArg, payloadArg, ok := chk.recording(call)
				if !ok {
					return true
				}
				calls++
				for _, problem := range chk.check(decl, call.Args[kindArg], call.Args[payloadArg]) {
					t.Errorf("%s:%d: %s", rel, fset.Position(call.Pos()).Line, problem)
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls < 50 {
		t.Fatalf("found %d recording calls; the walk misses most of them", calls)
	}
}

// importName is the name file f uses for the package at path, or "" when f does not import it.
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == path {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return path[strings.LastIndex(path, "/")+1:]
		}
	}
	return ""
}

// eventCheck checks the recording calls of one file.
type eventCheck struct {
	cat              catalogue
	eventlog, events string // the file's names for the two packages; "" when not imported
}

// recording reports whether call records an event, and which arguments are its kind and
// payload. Any method named Record with three arguments is taken for the Recorder's: the
// name is kept for it.
func (c eventCheck) recording(call *ast.CallExpr) (kind, payload int, ok bool) {
	sel, isSel := call.Fun.(*ast.SelectorExpr)
	if !isSel {
		return 0, 0, false
	}
	if x, isIdent := sel.X.(*ast.Ident); isIdent && c.eventlog != "" && x.Name == c.eventlog && sel.Sel.Name == "Append" && len(call.Args) == 5 {
		return 2, 4, true
	}
	if sel.Sel.Name == "Record" && len(call.Args) == 3 {
		return 0, 2, true
	}
	return 0, 0, false
}

// check returns what is wrong with a recording call's kind and payload in decl.
func (c eventCheck) check(decl ast.Node, kindExpr, payloadExpr ast.Expr) []string {
	kinds, problem := c.kinds(decl, kindExpr)
	if problem != "" {
		return []string{problem}
	}
	var out []string
	switch p := ast.Unparen(payloadExpr).(type) {
	case *ast.CompositeLit:
		if _, isMap := p.Type.(*ast.MapType); isMap {
			out = append(out, "the payload is a map: use the kind's payload struct from core/events")
		} else if typ := c.eventsName(p.Type); typ != "" {
			out = append(out, c.pairs(kinds, typ)...)
		}
	case *ast.CallExpr: // a conversion, events.T(v)
		if typ := c.eventsName(p.Fun); typ != "" && len(p.Args) == 1 {
			out = append(out, c.pairs(kinds, typ)...)
		}
	case *ast.Ident:
		if p.Name == "nil" {
			out = append(out, c.pairs(kinds, "None")...)
		}
	}
	return out
}

// pairs checks that typ is the payload type of every kind in kinds.
func (c eventCheck) pairs(kinds []string, typ string) []string {
	var out []string
	for _, k := range kinds {
		if want := c.cat.payloads[k]; want != typ {
			out = append(out, fmt.Sprintf("the payload of events.%s is events.%s, not %s", k, want, typ))
		}
	}
	return out
}

// eventsName is the name T of an expression events.T, or "".
func (c eventCheck) eventsName(e ast.Expr) string {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || c.events == "" {
		return ""
	}
	if x, ok := sel.X.(*ast.Ident); ok && x.Name == c.events {
		return sel.Sel.Name
	}
	return ""
}

// kinds returns the constants kindExpr may hold: one for events.K, each assigned for a local
// variable. problem says why it is none of those.
func (c eventCheck) kinds(decl ast.Node, kindExpr ast.Expr) (kinds []string, problem string) {
	switch e := ast.Unparen(kindExpr).(type) {
	case *ast.SelectorExpr:
		if name := c.eventsName(e); name != "" && c.cat.kinds[name] {
			return []string{name}, ""
		}
	case *ast.Ident:
		return c.localKinds(decl, e.Name)
	}
	return nil, fmt.Sprintf("the kind %s is not a constant of core/events (events.RunStarted, …)", render(kindExpr))
}

// localKinds returns the constants every assignment to the local variable name in decl gives
// it (declared as `var name events.Kind` or with one of them); problem says why they are not
// all constants of core/events.
func (c eventCheck) localKinds(decl ast.Node, name string) (kinds []string, problem string) {
	fail := ""
	check := func(e ast.Expr) {
		if k := c.eventsName(ast.Unparen(e)); k != "" && c.cat.kinds[k] {
			kinds = append(kinds, k)
		} else if fail == "" {
			fail = fmt.Sprintf("the kind variable %s is assigned %s, not a constant of core/events", name, render(e))
		}
	}
	ast.Inspect(decl, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.FuncType:
			for _, fl := range []*ast.FieldList{s.Params, s.Results} {
				if fl == nil {
					continue
				}
				for _, f := range fl.List {
					for _, id := range f.Names {
						if id.Name == name && fail == "" {
							fail = fmt.Sprintf("the kind %s is a parameter: pass a constant of core/events at the recording call", name)
						}
					}
				}
			}
		case *ast.AssignStmt:
			for i, lhs := range s.Lhs {
				if id, ok := lhs.(*ast.Ident); ok && id.Name == name {
					if len(s.Rhs) != len(s.Lhs) {
						fail = fmt.Sprintf("the kind variable %s is assigned from a call, not a constant of core/events", name)
						continue
					}
					check(s.Rhs[i])
				}
			}
		case *ast.ValueSpec:
			for i, id := range s.Names {
				if id.Name != name {
					continue
				}
				if i >= len(s.Values) {
					if c.eventsName(s.Type) != "Kind" { // var kind events.Kind, set by a switch
						fail = fmt.Sprintf("the kind variable %s is neither an events.Kind nor given a constant of core/events", name)
					}
					continue
				}
				check(s.Values[i])
			}
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{s.Key, s.Value} {
				if id, ok := e.(*ast.Ident); ok && id.Name == name {
					fail = fmt.Sprintf("the kind variable %s comes from a range, not a constant of core/events", name)
				}
			}
		}
		return true
	})
	if fail != "" {
		return nil, fail
	}
	if len(kinds) == 0 {
		return nil, fmt.Sprintf("the kind %s is not a local variable assigned constants of core/events", name)
	}
	return kinds, ""
}

// render is expression e as short source text, for a message.
func render(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.BasicLit:
		return x.Value
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return render(x.X) + "." + x.Sel.Name
	case *ast.BinaryExpr:
		return render(x.X) + " " + x.Op.String() + " " + render(x.Y)
	case *ast.CallExpr:
		return render(x.Fun) + "(…)"
	case *ast.ParenExpr:
		return "(" + render(x.X) + ")"
	}
	return fmt.Sprintf("%T", e)
}
