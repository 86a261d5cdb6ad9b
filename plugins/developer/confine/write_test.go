package confine

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tempFiles lists the temporary files Write leaves in dir (none, it should).
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".buddi-") {
			out = append(out, e.Name())
		}
	}
	return out
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Sys().(*syscall.Stat_t).Ino
}

func TestWrite(t *testing.T) {
	t.Parallel()
	mechanisms(t, func(t *testing.T, b *testBundle) {
		t.Run("a new file", func(t *testing.T) {
			w, err := b.root.Write("src", "new.go", []byte("package new"))
			if err != nil {
				t.Fatal(err)
			}
			if !w.Created || w.Rel != "src/new.go" {
				t.Errorf("got Created %v at %q, want true at src/new.go", w.Created, w.Rel)
			}
			path := filepath.Join(b.ws, "src", "new.go")
			if got := readFile(t, path); got != "package new" {
				t.Errorf("got %q", got)
			}
			info, _ := os.Stat(path)
			if got := info.Mode().Perm(); got != newFileMode {
				t.Errorf("got mode %v, want %v", got, os.FileMode(newFileMode))
			}
			if got := tempFiles(t, filepath.Join(b.ws, "src")); got != nil {
				t.Errorf("temporary files left: %v", got)
			}
		})
		t.Run("new parents", func(t *testing.T) {
			if _, err := b.root.Write("", "a/b/c/d.txt", []byte("d")); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(b.ws, "a", "b", "c", "d.txt")); got != "d" {
				t.Errorf("got %q", got)
			}
		})
		t.Run("replaced whole, mode kept", func(t *testing.T) {
			path := filepath.Join(b.ws, "script.sh")
			old := strings.Repeat("old line\n", 10000)
			writeFile(t, path, old, 0o750)
			before := inode(t, path)
			reader, err := os.Open(path) // a reader that started before the write
			if err != nil {
				t.Fatal(err)
			}
			defer reader.Close()
			w, err := b.root.Write("", "script.sh", []byte("#!/bin/sh\necho new\n"))
			if err != nil {
				t.Fatal(err)
			}
			if w.Created {
				t.Error("got Created for a file that existed")
			}
			if got := readFile(t, path); got != "#!/bin/sh\necho new\n" {
				t.Errorf("got %q", got)
			}
			info, _ := os.Stat(path)
			if got := info.Mode().Perm(); got != 0o750 {
				t.Errorf("got mode %v, want 0750", got)
			}
			if inode(t, path) == before {
				t.Error("the file was rewritten in place, not replaced")
			}
			// The old reader still sees the whole old file: nothing was truncated under it.
			if got, _ := io.ReadAll(reader); string(got) != old {
				t.Errorf("the earlier reader got %d bytes, want the %d of the old file", len(got), len(old))
			}
			if got := tempFiles(t, b.ws); got != nil {
				t.Errorf("temporary files left: %v", got)
			}
		})
		t.Run("setuid dropped", func(t *testing.T) {
			path := filepath.Join(b.ws, "suid")
			writeFile(t, path, "x", 0o4755)
			if _, err := b.root.Write("", "suid", []byte("y")); err != nil {
				t.Fatal(err)
			}
			info, _ := os.Stat(path)
			if got := info.Mode() & (os.ModePerm | os.ModeSetuid); got != 0o755 {
				t.Errorf("got mode %v, want 0755 without setuid", got)
			}
		})
		t.Run("owner kept", func(t *testing.T) {
			path := filepath.Join(b.ws, "theirs.txt")
			writeFile(t, path, "x", 0o644)
			if err := os.Chown(path, 4321, 4321); err != nil {
				t.Skip("cannot give a file away without privilege")
			}
			if _, err := b.root.Write("", "theirs.txt", []byte("y")); err != nil {
				t.Fatal(err)
			}
			info, _ := os.Stat(path)
			if st := info.Sys().(*syscall.Stat_t); st.Uid != 4321 || st.Gid != 4321 {
				t.Errorf("got owner %d:%d, want 4321:4321", st.Uid, st.Gid)
			}
		})
		t.Run(".git is never written", func(t *testing.T) {
			mkdir(t, filepath.Join(b.ws, ".git", "hooks"))
			for _, p := range []string{".git", ".git/config", ".git/hooks/pre-commit", "sub/.git/hooks/x", ".GIT/config"} {
				_, err := b.root.Write("", p, []byte("#!/bin/sh\nevil"))
				errorAs[*GitDirError](t, err)
			}
			for _, p := range []string{".git/config", ".git/hooks/pre-commit", "sub", ".GIT"} {
				if _, err := os.Lstat(filepath.Join(b.ws, p)); !os.IsNotExist(err) {
					t.Errorf("%s: got %v, want it absent", p, err)
				}
			}
		})
		t.Run(".gitmodules flagged", func(t *testing.T) {
			for _, p := range []string{".gitmodules", "src/.gitattributes"} {
				w, err := b.root.Write("", p, []byte("x"))
				if err != nil {
					t.Fatal(err)
				}
				if !w.NeedsGate {
					t.Errorf("%s: got NeedsGate false, want true", p)
				}
			}
			w, err := b.root.Write("", ".gitignore", []byte("x"))
			if err != nil || w.NeedsGate {
				t.Errorf(".gitignore: got %v, NeedsGate %v; want no error and no gate", err, w.NeedsGate)
			}
		})
		t.Run("links refused", func(t *testing.T) {
			_, err := b.root.Write("", "link-file-in", []byte("through"))
			symlinkAt("link-file-in")(t, err)
			_, err = b.root.Write("", "link-out/planted.txt", []byte("through"))
			symlinkAt("link-out")(t, err)
			_, err = b.root.Write("", "link-in/new/x.txt", []byte("through"))
			symlinkAt("link-in")(t, err)
			if got := readFile(t, filepath.Join(b.ws, "a.txt")); got != "inside" {
				t.Errorf("a.txt is now %q", got)
			}
			if _, err := os.Lstat(filepath.Join(b.outside, "planted.txt")); !os.IsNotExist(err) {
				t.Errorf("planted outside: %v", err)
			}
			if _, err := os.Lstat(filepath.Join(b.ws, "src", "new")); !os.IsNotExist(err) {
				t.Errorf("a parent was made through a link: %v", err)
			}
		})
		t.Run("outside refused", func(t *testing.T) {
			_, err := b.root.Write("", "../outside/planted.txt", []byte("x"))
			errorAs[*OutsideError](t, err)
			_, err = b.root.Write("", filepath.Join(b.outside, "planted.txt"), []byte("x"))
			errorAs[*OutsideError](t, err)
		})
		t.Run("a directory refused", func(t *testing.T) {
			_, err := b.root.Write("", "src", []byte("x"))
			errorAs[*NotRegularError](t, err)
			_, err = b.root.Write("", ".", []byte("x"))
			errorAs[*NotRegularError](t, err)
		})
	})
}

// TestWriteFailureLeavesNoTemp makes the rename fail (the target became a directory after
// the temporary file was complete) and finds the target untouched and no temporary file.
func TestWriteFailureLeavesNoTemp(t *testing.T) {
	t.Parallel()
	mechanisms(t, func(t *testing.T, b *testBundle) {
		b.root.beforeRename = func(string) {
			a := filepath.Join(b.ws, "a.txt")
			if err := os.Remove(a); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(a, "inner"), "x", 0o644)
		}
		if _, err := b.root.Write("", "a.txt", []byte("new")); err == nil {
			t.Fatal("got no error renaming over a directory")
		}
		if got := tempFiles(t, b.ws); got != nil {
			t.Errorf("temporary files left: %v", got)
		}
		if got := readFile(t, filepath.Join(b.ws, "a.txt", "inner")); got != "x" {
			t.Errorf("the directory's file is now %q", got)
		}
	})
}

// TestWriteSwapped swaps the target's directory for a link to the outside between
// validation and the write: nothing lands outside.
func TestWriteSwapped(t *testing.T) {
	t.Parallel()
	mechanisms(t, func(t *testing.T, b *testBundle) {
		t.Run("directory for a link", func(t *testing.T) {
			b.root.afterValidate = func(string) { swapForLink(t, filepath.Join(b.ws, "src"), b.outside) }
			t.Cleanup(func() { b.root.afterValidate = nil })
			_, err := b.root.Write("", "src/main.go", []byte("planted"))
			errorAs[*SwappedError](t, err)
			if got := readFile(t, filepath.Join(b.outside, "main.go")); got != "secret main" {
				t.Errorf("the outside file is now %q", got)
			}
			if got := tempFiles(t, b.outside); got != nil {
				t.Errorf("temporary files outside: %v", got)
			}
		})
		t.Run("directory for a directory", func(t *testing.T) {
			b.root.afterValidate = func(string) {
				deep := filepath.Join(b.ws, "src.orig", "deep")
				if err := os.Rename(deep, deep+".orig"); err != nil {
					t.Fatal(err)
				}
				mkdir(t, deep)
			}
			t.Cleanup(func() { b.root.afterValidate = nil })
			_, err := b.root.Write("src.orig/deep", "x.txt", []byte("y"))
			errorAs[*SwappedError](t, err)
		})
		t.Run("target replaced", func(t *testing.T) {
			b.root.afterValidate = func(string) { writeFile(t, filepath.Join(b.ws, "appeared.txt"), "theirs", 0o644) }
			t.Cleanup(func() { b.root.afterValidate = nil })
			_, err := b.root.Write("", "appeared.txt", []byte("ours"))
			errorAs[*SwappedError](t, err)
			if got := readFile(t, filepath.Join(b.ws, "appeared.txt")); got != "theirs" {
				t.Errorf("got %q, want the file that appeared kept", got)
			}
		})
	})
}

// TestWriteInsideGitRoot: a workspace that is itself inside a .git directory writes nothing.
func TestWriteInsideGitRoot(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "repo", ".git", "hooks")
	mkdir(t, dir)
	r, err := New(dir, Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Write("", "pre-commit", []byte("x"))
	errorAs[*GitDirError](t, err)
}
