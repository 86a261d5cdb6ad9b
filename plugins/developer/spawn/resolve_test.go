package spawn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	a, b, c := filepath.Join(base, "a"), filepath.Join(base, "b"), filepath.Join(base, "c")
	for _, d := range []string{a, b, c, filepath.Join(a, "isdir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path string, mode os.FileMode) {
		if err := os.WriteFile(path, []byte("#!/bin/true\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(a, "noexec"), 0o644) // not executable, even for root
	write(filepath.Join(b, "noexec"), 0o755)
	write(filepath.Join(b, "tool"), 0o755)
	write(filepath.Join(c, "tool"), 0o755)
	write(filepath.Join(b, "isdir"), 0o755)
	write(filepath.Join(c, "onlyhere"), 0o644)
	if err := os.Symlink(filepath.Join(b, "tool"), filepath.Join(c, "linked")); err != nil {
		t.Fatal(err)
	}
	// A relative PATH entry that would find the program from the directory the tests run in.
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	relB, err := filepath.Rel(cwd, b)
	if err != nil {
		t.Fatal(err)
	}

	path := strings.Join([]string{a, b, c}, ":")
	tests := []struct {
		name    string
		program string
		path    string
		want    string
		err     error
		notExec []string
	}{
		{"first directory that has it", "tool", path, filepath.Join(b, "tool"), nil, nil},
		{"a non-executable file is skipped", "noexec", path, filepath.Join(b, "noexec"), nil, nil},
		{"a directory is skipped", "isdir", path, filepath.Join(b, "isdir"), nil, nil},
		{"a link on PATH keeps its name", "linked", path, filepath.Join(c, "linked"), nil, nil},
		{"not found", "missing", path, "", ErrNotFound, nil},
		{"only non-executable", "onlyhere", path, "", ErrNotFound, []string{filepath.Join(c, "onlyhere")}},
		{"empty PATH", "tool", "", "", ErrNotFound, nil},
		{"relative PATH entries are not searched", "tool", ":.:" + relB, "", ErrNotFound, nil},
		{"absolute program", "/bin/true", path, "", ErrNotBare, nil},
		{"relative program", "./tool", path, "", ErrNotBare, nil},
		{"program with a directory", "node_modules/.bin/vite", path, "", ErrNotBare, nil},
		{"empty program", "", path, "", ErrNotBare, nil},
		{"dot", ".", path, "", ErrNotBare, nil},
		{"dot dot", "..", path, "", ErrNotBare, nil},
		{"NUL", "to\x00ol", path, "", ErrNotBare, nil},
	}
	for _, tt := range tests {
		got, err := Resolve(tt.program, tt.path)
		if got != tt.want || !errors.Is(err, tt.err) {
			t.Errorf("%s: Resolve(%q) = %q, %v; want %q, %v", tt.name, tt.program, got, err, tt.want, tt.err)
			continue
		}
		if tt.err == nil {
			continue
		}
		var re *ResolveError
		if !errors.As(err, &re) || re.Program != tt.program || re.Path != tt.path || len(re.NotExecutable) != len(tt.notExec) {
			t.Errorf("%s: got %#v", tt.name, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, fmt.Sprintf("%q", tt.program)) || !strings.Contains(msg, `PATH "`+tt.path+`"`) {
			t.Errorf("%s: %q does not name the program and the PATH", tt.name, msg)
		}
		for _, f := range tt.notExec {
			if !strings.Contains(msg, f) {
				t.Errorf("%s: %q does not name %s", tt.name, msg, f)
			}
		}
	}
}
