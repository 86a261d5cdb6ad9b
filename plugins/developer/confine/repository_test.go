package confine

import (
	"path/filepath"
	"strings"
	"testing"
)

// gitInit makes dir look like a repository root to git: .git with HEAD, objects and refs.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	mkdir(t, filepath.Join(dir, ".git", "objects"))
	mkdir(t, filepath.Join(dir, ".git", "refs"))
}

func TestRepository(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	home := filepath.Join(base, "home")
	projects := filepath.Join(base, "projects")
	gitInit(t, filepath.Join(projects, "p1"))
	gitInit(t, filepath.Join(projects, "p2"))
	mkdir(t, filepath.Join(projects, "p1", "sub"))
	writeFile(t, filepath.Join(projects, "wt", ".git"), "gitdir: /elsewhere/.git/worktrees/wt\n", 0o644)
	writeFile(t, filepath.Join(projects, "junk", ".git"), "not a pointer\n", 0o644)
	mkdir(t, filepath.Join(projects, "empty", ".git"))
	mkdir(t, filepath.Join(projects, "linked"))
	symlink(t, "../p1/.git", filepath.Join(projects, "linked", ".git"))

	tests := []struct {
		dir       string
		isRepo    bool
		err       bool   // IsRepository refuses
		enclosing string // "" or the directory under base
	}{
		{dir: "projects"},
		{dir: "projects/p1", isRepo: true},
		{dir: "projects/p1/sub", enclosing: "projects/p1"},
		{dir: "projects/wt", isRepo: true},
		{dir: "projects/junk"},
		{dir: "projects/empty"},
		{dir: "projects/linked", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			t.Parallel()
			r, err := New(filepath.Join(base, tt.dir), Options{Home: home})
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.IsRepository()
			if tt.err {
				errorAs[*SymlinkError](t, err)
			} else if err != nil || got != tt.isRepo {
				t.Errorf("IsRepository: got %v, %v; want %v", got, err, tt.isRepo)
			}
			enc, err := r.EnclosingRepository()
			if err != nil {
				t.Fatal(err)
			}
			if tt.enclosing != "" {
				if want := filepath.Join(r.Dir(), strings.Repeat("../", strings.Count(tt.dir, "/")-strings.Count(tt.enclosing, "/"))); enc != filepath.Clean(want) {
					t.Errorf("EnclosingRepository: got %q, want %q", enc, filepath.Clean(want))
				}
			} else if strings.HasPrefix(enc, base) {
				t.Errorf("EnclosingRepository: got %q, want none inside the test's tree", enc)
			}
		})
	}
}
