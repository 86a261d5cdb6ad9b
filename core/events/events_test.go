package events

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// declared is one Kind constant as the source declares it.
type declared struct {
	name, value string
	doc         bool // it has its own doc comment
}

// declaredKinds parses the package's non-test files for the constants of type Kind.
func declaredKinds(t *testing.T) []declared {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var out []declared
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Kind" {
					continue
				}
				for i, n := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("%s: a Kind is a plain string literal", n.Name)
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					out = append(out, declared{name: n.Name, value: v, doc: vs.Doc != nil})
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no Kind constants found")
	}
	return out
}

// kindSyntax is the check core.events puts on its kind column.
var kindSyntax = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)

// TestEveryKindIsUniqueDocumentedAndHasAPayload fails on a Kind constant whose value another
// constant has, that the database would refuse, that has no doc comment of its own, or that
// Payloads does not pair with a payload; and on a Payloads entry for no declared constant.
func TestEveryKindIsUniqueDocumentedAndHasAPayload(t *testing.T) {
	seen := map[string]string{}
	for _, k := range declaredKinds(t) {
		if other, dup := seen[k.value]; dup {
			t.Errorf("%s and %s are both %q", other, k.name, k.value)
		}
		seen[k.value] = k.name
		if !kindSyntax.MatchString(k.value) {
			t.Errorf("%s = %q: core.events refuses it (dotted lower-case words)", k.name, k.value)
		}
		if !k.doc {
			t.Errorf("%s has no doc comment saying when it is written", k.name)
		}
		if _, ok := Payloads[Kind(k.value)]; !ok {
			t.Errorf("%s (%q) has no payload in Payloads", k.name, k.value)
		}
	}
	for k := range Payloads {
		if _, ok := seen[string(k)]; !ok {
			t.Errorf("Payloads pairs %q, which no constant declares", k)
		}
	}
}

// TestPayloadsAreTaggedStructs fails on a payload that is not a struct, or with an exported
// field that has no JSON name: the wire names are the catalogue's, not Go's.
func TestPayloadsAreTaggedStructs(t *testing.T) {
	for k, p := range Payloads {
		typ := reflect.TypeOf(p)
		if typ == nil || typ.Kind() != reflect.Struct {
			t.Errorf("%s: payload %T is not a struct", k, p)
			continue
		}
		names := map[string]bool{}
		for f := range typ.Fields() {
			if !f.IsExported() {
				t.Errorf("%s: %s.%s is unexported, so it is never written", k, typ.Name(), f.Name)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				t.Errorf("%s: %s.%s has no JSON name", k, typ.Name(), f.Name)
			}
			if names[name] {
				t.Errorf("%s: %s writes %q twice", k, typ.Name(), name)
			}
			names[name] = true
		}
		b, err := json.Marshal(p)
		if err != nil || !strings.HasPrefix(string(b), "{") {
			t.Errorf("%s: the zero payload marshals to %s, %v; want a JSON object", k, b, err)
		}
	}
}

func TestFamily(t *testing.T) {
	tests := []struct {
		k    Kind
		want string
	}{
		{SupervisorRestarted, "supervisor."},
		{RunToolIntent, "run."},
		{AgentAccountSet, "agent."},
	}
	for _, tt := range tests {
		if got := tt.k.Family(); got != tt.want {
			t.Errorf("%s.Family() = %q, want %q", tt.k, got, tt.want)
		}
	}
}
