package boundary

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// pkg is one package as go list reports it: its import path, what it imports directly, and
// everything it depends on transitively.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// violation is one forbidden import found under core.
type violation struct {
	Pkg, Import, Rule string
}

// forbidden reports whether a core package may not import path, and which rule says so.
func forbidden(path string) (rule string, bad bool) {
	under := func(root string) bool { return path == root || strings.HasPrefix(path, root+"/") }
	switch {
	case strings.HasPrefix(path, "buddi/plugins/"):
		return "core imports no plugin (only the contract, buddi/plugins)", true
	case under("buddi/surfaces"):
		return "core imports no surface: surfaces are thin adapters over core", true
	case under("buddi/app"):
		return "core does not import the composition root", true
	case under("buddi/cmd"):
		return "core does not import a command", true
	}
	return "", false
}

// isCore reports whether a listed package belongs to core: buddi/core or below, including
// its test variants ("buddi/core/x [buddi/core/x.test]") and test binaries.
func isCore(importPath string) bool {
	path, _, _ := strings.Cut(importPath, " ")
	return path == "buddi/core" || strings.HasPrefix(path, "buddi/core/")
}

// check returns every forbidden import, direct or transitive, of the core packages in pkgs.
func check(pkgs []pkg) []violation {
	var out []violation
	for _, p := range pkgs {
		if !isCore(p.ImportPath) {
			continue
		}
		seen := map[string]bool{}
		for _, imp := range slices.Concat(p.Imports, p.Deps) {
			if seen[imp] {
				continue
			}
			seen[imp] = true
			if rule, bad := forbidden(imp); bad {
				out = append(out, violation{Pkg: p.ImportPath, Import: imp, Rule: rule})
			}
		}
	}
	return out
}

func TestCheckFlagsForbiddenImports(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pkgs []pkg
		want []string // the forbidden imports found
	}{
		{"a command", []pkg{{ImportPath: "buddi/core/fake", Imports: []string{"buddi/cmd/buddi"}}}, []string{"buddi/cmd/buddi"}},
		{"a plugin", []pkg{{ImportPath: "buddi/core/fake", Imports: []string{"context", "buddi/plugins", "buddi/plugins/developer"}}}, []string{"buddi/plugins/developer"}},
		{"a plugin from a core test", []pkg{{ImportPath: "buddi/core/fake_test [buddi/core/fake.test]", Imports: []string{"buddi/plugins/email"}}}, []string{"buddi/plugins/email"}},
		{"a plugin, transitively", []pkg{{ImportPath: "buddi/core/fake", Imports: []string{"buddi/core/other"}, Deps: []string{"buddi/core/other", "buddi/plugins/browser/cdp"}}}, []string{"buddi/plugins/browser/cdp"}},
		{"a surface", []pkg{{ImportPath: "buddi/core", Imports: []string{"buddi/surfaces/telegram"}}}, []string{"buddi/surfaces/telegram"}},
		{"surfaces itself", []pkg{{ImportPath: "buddi/core/fake", Imports: []string{"buddi/surfaces"}}}, []string{"buddi/surfaces"}},
		{"the gateway", []pkg{{ImportPath: "buddi/core/fake", Imports: []string{"buddi/app"}, Deps: []string{"buddi/app"}}}, []string{"buddi/app"}},
		{"the contract is allowed", []pkg{{ImportPath: "buddi/core/fake", Imports: []string{"buddi/plugins", "buddi/core/permission"}}}, nil},
		{"look-alike names are allowed", []pkg{{ImportPath: "buddi/core/fake", Imports: []string{"buddi/pluginsdk", "buddi/appish", "buddi/cmdline", "example.com/buddi/plugins/x"}}}, nil},
		{"outside core is not checked", []pkg{{ImportPath: "buddi/app", Imports: []string{"buddi/plugins/developer"}}, {ImportPath: "buddi/corelike", Imports: []string{"buddi/cmd/buddi"}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, v := range check(tt.pkgs) {
				if v.Rule == "" {
					t.Errorf("violation %+v has no rule", v)
				}
				got = append(got, v.Import)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("check found %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCoreImportsNoPlugin lists every package under buddi/core, with its tests, and fails on
// any forbidden import, direct or transitive.
func TestCoreImportsNoPlugin(t *testing.T) {
	t.Parallel()
	pkgs := listCore(t)
	var found []string
	for _, p := range pkgs {
		if isCore(p.ImportPath) {
			found = append(found, p.ImportPath)
		}
	}
	// The listing must see core, or the test would pass on nothing.
	for _, want := range []string{"buddi/core/permission", "buddi/core/registry", "buddi/core/boundary"} {
		if !slices.Contains(found, want) {
			t.Fatalf("go list did not report %s; it found %v", want, found)
		}
	}
	for _, v := range check(pkgs) {
		t.Errorf("%s imports %s: %s", v.Pkg, v.Import, v.Rule)
	}
}

// listCore runs go list over buddi/core/... with the test variants, tolerating packages that
// do not build (their own tests report that), and decodes its stream of JSON objects.
func listCore(t *testing.T) []pkg {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "list", "-e", "-test", "-json=ImportPath,Imports,Deps,Error", "buddi/core/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			pkg
			Error *struct{ Err string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		if p.Error != nil {
			t.Logf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p.pkg)
	}
	return pkgs
}
