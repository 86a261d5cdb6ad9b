package confine

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// testBundle is one workspace with links in it, an outside directory holding a secret, and
// a home directory of its own.
type testBundle struct {
	ws      string // the workspace directory
	outside string // a directory beside it, holding secret.txt
	home    string // the owner's home for this test: empty, not the workspace's parent
	root    *Root
}

// setup builds:
//
//	ws/a.txt               "inside"
//	ws/src/main.go         "package main"
//	ws/src/deep/x.txt      "x"
//	ws/link-in        ->   src           (a link inside, pointing inside)
//	ws/link-file-in   ->   a.txt         (likewise, to a file)
//	ws/link-out       ->   ../outside    (a link inside, pointing outside)
//	ws/link-abs-out   ->   <abs>/outside/secret.txt
//	outside/secret.txt     "secret"
//	outside/main.go        "secret main"
func setup(t *testing.T) *testBundle {
	t.Helper()
	base := t.TempDir()
	b := &testBundle{
		ws:      filepath.Join(base, "ws"),
		outside: filepath.Join(base, "outside"),
		home:    filepath.Join(base, "home"),
	}
	mkdir(t, b.home)
	writeFile(t, filepath.Join(b.ws, "a.txt"), "inside", 0o644)
	writeFile(t, filepath.Join(b.ws, "src", "main.go"), "package main", 0o644)
	writeFile(t, filepath.Join(b.ws, "src", "deep", "x.txt"), "x", 0o644)
	writeFile(t, filepath.Join(b.outside, "secret.txt"), "secret", 0o644)
	writeFile(t, filepath.Join(b.outside, "main.go"), "secret main", 0o644)
	symlink(t, "src", filepath.Join(b.ws, "link-in"))
	symlink(t, "a.txt", filepath.Join(b.ws, "link-file-in"))
	symlink(t, "../outside", filepath.Join(b.ws, "link-out"))
	symlink(t, filepath.Join(b.outside, "secret.txt"), filepath.Join(b.ws, "link-abs-out"))
	root, err := New(b.ws, Options{Home: b.home})
	if err != nil {
		t.Fatal(err)
	}
	b.root = root
	return b
}

// mechanisms runs f once with openat2 (when the kernel has it) and once with the component
// walk, each on its own bundle.
func mechanisms(t *testing.T, f func(t *testing.T, b *testBundle)) {
	t.Helper()
	for _, m := range []struct {
		name    string
		openat2 bool
	}{{"openat2", true}, {"walk", false}} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			if m.openat2 && !haveOpenat2() {
				t.Skip("the kernel has no openat2")
			}
			b := setup(t)
			b.root.openat2 = m.openat2
			f(t, b)
		})
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	mkdir(t, filepath.Dir(link))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// errorAs fails the test unless err is, or wraps, a T.
func errorAs[T error](t *testing.T, err error) T {
	t.Helper()
	var target T
	if !errors.As(err, &target) {
		t.Fatalf("got error %v (%T), want a %T", err, err, target)
	}
	return target
}

// swapForLink replaces the directory dir with a symbolic link to target, keeping the
// directory beside it.
func swapForLink(t *testing.T, dir, target string) {
	t.Helper()
	if err := os.Rename(dir, dir+".orig"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, dir); err != nil {
		t.Fatal(err)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	home := filepath.Join(base, "home")
	writeFile(t, filepath.Join(home, ".ssh", "id_ed25519"), "key", 0o600)
	mkdir(t, filepath.Join(home, ".ssh", "keys"))
	writeFile(t, filepath.Join(base, "file"), "", 0o644)
	mkdir(t, filepath.Join(base, "real"))
	symlink(t, "real", filepath.Join(base, "named"))

	tests := []struct {
		name string
		dir  string
		want string // a substring of the error, or "" for success
	}{
		{"relative", "ws", "not an absolute path"},
		{"missing", filepath.Join(base, "missing"), "no such file"},
		{"a file", filepath.Join(base, "file"), "not a directory"},
		{"protected", filepath.Join(home, ".ssh"), "protected"},
		{"inside protected", filepath.Join(home, ".ssh", "keys"), "protected"},
		{"the home", home, ""},
		{"through a link the owner named", filepath.Join(base, "named"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := New(tt.dir, Options{Home: home})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				if r.Dir() == "" || !filepath.IsAbs(r.Dir()) {
					t.Errorf("got Dir %q, want an absolute path", r.Dir())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	b := setup(t)
	type want struct {
		rel       string
		exists    bool
		needsGate bool
		inGit     bool
	}
	tests := []struct {
		name      string
		cwd, path string
		want      want
		err       func(t *testing.T, err error)
	}{
		{name: "file", path: "a.txt", want: want{rel: "a.txt", exists: true}},
		{name: "root", path: "", want: want{rel: ".", exists: true}},
		{name: "dot", path: ".", want: want{rel: ".", exists: true}},
		{name: "redundant", path: "./src//deep/./x.txt", want: want{rel: "src/deep/x.txt", exists: true}},
		{name: "dotdot inside", path: "src/deep/../main.go", want: want{rel: "src/main.go", exists: true}},
		{name: "cwd", cwd: "src", path: "deep/x.txt", want: want{rel: "src/deep/x.txt", exists: true}},
		{name: "cwd dotdot", cwd: "src/deep", path: "../../a.txt", want: want{rel: "a.txt", exists: true}},
		{name: "absolute inside", path: filepath.Join(b.ws, "src", "main.go"), want: want{rel: "src/main.go", exists: true}},
		{name: "absolute cwd inside", cwd: filepath.Join(b.ws, "src"), path: "main.go", want: want{rel: "src/main.go", exists: true}},
		{name: "new file with new parents", path: "new/dir/f.txt", want: want{rel: "new/dir/f.txt"}},
		{name: "gitmodules", path: ".gitmodules", want: want{rel: ".gitmodules", needsGate: true}},
		{name: "nested gitattributes", path: "src/.gitattributes", want: want{rel: "src/.gitattributes", needsGate: true}},
		{name: "in .git", path: ".git/config", want: want{rel: ".git/config", inGit: true}},
		{name: "in .GIT", path: "src/.GIT/hooks/pre-commit", want: want{rel: "src/.GIT/hooks/pre-commit", inGit: true}},
		{name: "a .git-like name", path: ".github/x", want: want{rel: ".github/x"}},

		{name: "dotdot out", path: "../outside/secret.txt", err: outside},
		{name: "dotdot out after a dir", path: "src/../../outside/secret.txt", err: outside},
		{name: "dotdot out of cwd", cwd: "src", path: "../../outside/secret.txt", err: outside},
		{name: "cwd out", cwd: "..", path: "outside/secret.txt", err: outside},
		{name: "absolute outside", path: "/etc/passwd", err: outside},
		{name: "absolute cwd outside", cwd: "/etc", path: "passwd", err: outside},
		{name: "absolute climbing out", path: filepath.Join(b.ws) + "/../outside/secret.txt", err: outside},
		{name: "absolute sibling prefix", path: b.ws + "x/a.txt", err: outside},

		{name: "link inside to inside", path: "link-in/main.go", err: symlinkAt("link-in")},
		{name: "link itself", path: "link-in", err: symlinkAt("link-in")},
		{name: "link to a file inside", path: "link-file-in", err: symlinkAt("link-file-in")},
		{name: "link out", path: "link-out/secret.txt", err: symlinkAt("link-out")},
		{name: "absolute link out", path: "link-abs-out", err: symlinkAt("link-abs-out")},
		{name: "link then dotdot", path: "link-out/../a.txt", err: symlinkAt("link-out")},
		{name: "link as cwd", cwd: "link-in", path: "main.go", err: symlinkAt("link-in")},

		{name: "through a file", path: "a.txt/x", err: notDirAt("a.txt")},
		{name: "dotdot from a file", path: "a.txt/..", err: notDirAt("a.txt")},
		{name: "dotdot from a missing dir", path: "missing/../a.txt", err: notExist},
		{name: "NUL", path: "a\x00b", err: invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := b.root.Resolve(tt.cwd, tt.path)
			if tt.err != nil {
				tt.err(t, err)
				if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrInvalid) && !IsRefusal(err) {
					t.Errorf("got %v, want a refusal", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want no error", err)
			}
			got := want{rel: p.Rel, exists: p.Exists, needsGate: p.NeedsGate, inGit: p.InGit}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if wantAbs := filepath.Join(b.root.Dir(), p.Rel); p.Abs != wantAbs {
				t.Errorf("got Abs %q, want %q", p.Abs, wantAbs)
			}
		})
	}
}

func outside(t *testing.T, err error) { t.Helper(); errorAs[*OutsideError](t, err) }

func notExist(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("got %v, want fs.ErrNotExist", err)
	}
}

func invalid(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("got %v, want fs.ErrInvalid", err)
	}
}

func symlinkAt(component string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		if got := errorAs[*SymlinkError](t, err).Component; got != component {
			t.Errorf("got the link at %q, want %q", got, component)
		}
	}
}

func notDirAt(component string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		if got := errorAs[*NotDirError](t, err).Component; got != component {
			t.Errorf("got the file at %q, want %q", got, component)
		}
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	mechanisms(t, func(t *testing.T, b *testBundle) {
		t.Run("a file", func(t *testing.T) {
			f, p, err := b.root.Open("src", "main.go")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, _ := io.ReadAll(f)
			if string(got) != "package main" || p.Rel != "src/main.go" {
				t.Errorf("got %q at %q, want %q at %q", got, p.Rel, "package main", "src/main.go")
			}
		})
		t.Run("a link inside that points inside", func(t *testing.T) {
			_, _, err := b.root.Open("", "link-file-in")
			symlinkAt("link-file-in")(t, err)
			_, _, err = b.root.Open("", "link-in/main.go")
			symlinkAt("link-in")(t, err)
		})
		t.Run("a link that points outside", func(t *testing.T) {
			_, _, err := b.root.Open("", "link-out/secret.txt")
			symlinkAt("link-out")(t, err)
			_, _, err = b.root.Open("", "link-abs-out")
			symlinkAt("link-abs-out")(t, err)
		})
		t.Run("a directory", func(t *testing.T) {
			_, _, err := b.root.Open("", "src")
			errorAs[*NotRegularError](t, err)
		})
		t.Run("missing", func(t *testing.T) {
			_, _, err := b.root.Open("", "missing.txt")
			notExist(t, err)
		})
		t.Run("a named pipe", func(t *testing.T) {
			if err := unix.Mkfifo(filepath.Join(b.ws, "fifo"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := b.root.Open("", "fifo")
			errorAs[*NotRegularError](t, err)
		})
	})
}

// TestOpenSwapped swaps the path between validation and the open, through the test hook.
func TestOpenSwapped(t *testing.T) {
	t.Parallel()
	mechanisms(t, func(t *testing.T, b *testBundle) {
		t.Run("a directory for a link", func(t *testing.T) {
			b.root.afterValidate = func(string) { swapForLink(t, filepath.Join(b.ws, "src"), b.outside) }
			t.Cleanup(func() { b.root.afterValidate = nil })
			f, _, err := b.root.Open("", "src/main.go")
			if err == nil {
				got, _ := io.ReadAll(f)
				f.Close()
				t.Fatalf("read %q through a swapped directory", got)
			}
			errorAs[*SwappedError](t, err)
			// The path now leads outside, and plain path resolution would follow it.
			if got := readFile(t, filepath.Join(b.ws, "src", "main.go")); got != "secret main" {
				t.Fatalf("the swap did not take: got %q", got)
			}
		})
		t.Run("the file for a link", func(t *testing.T) {
			b.root.afterValidate = func(string) {
				a := filepath.Join(b.ws, "a.txt")
				if err := os.Remove(a); err != nil {
					t.Fatal(err)
				}
				symlink(t, filepath.Join(b.outside, "secret.txt"), a)
			}
			t.Cleanup(func() { b.root.afterValidate = nil })
			_, _, err := b.root.Open("", "a.txt")
			errorAs[*SwappedError](t, err)
		})
	})
}

// TestOpenSwappedDirectoryForDirectory swaps a directory for another directory, which holds
// no link for the kernel to refuse: only the (dev, ino) check tells the file opened from the
// file validated.
func TestOpenSwappedDirectoryForDirectory(t *testing.T) {
	t.Parallel()
	mechanisms(t, func(t *testing.T, b *testBundle) {
		b.root.afterValidate = func(string) {
			src := filepath.Join(b.ws, "src")
			if err := os.Rename(src, src+".orig"); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(src, "main.go"), "impostor", 0o644)
		}
		_, _, err := b.root.Open("", "src/main.go")
		errorAs[*SwappedError](t, err)
	})
}

// TestIdentityCheckRefusesLinkedDirectory proves the (dev, ino) check on its own: after
// validation, the directory is swapped for a link to the outside and the file is opened the
// way an open by path string would, following the link (O_NOFOLLOW only guards the last
// component). The descriptor is not the file validated, and checkID refuses it.
func TestIdentityCheckRefusesLinkedDirectory(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p, err := b.root.Resolve("", "src/main.go")
	if err != nil {
		t.Fatal(err)
	}
	swapForLink(t, filepath.Join(b.ws, "src"), b.outside)
	fd, err := unix.Open(p.Abs, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := checkID(fd, p.id, unix.S_IFREG); !errors.Is(err, errIdentity) {
		t.Errorf("got %v, want the identity check to refuse the file behind the link", err)
	}
	// And the file validated, reached again, passes.
	fd2, err := unix.Open(filepath.Join(b.ws, "src.orig", "main.go"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd2)
	if err := checkID(fd2, p.id, unix.S_IFREG); err != nil {
		t.Errorf("got %v for the validated file, want nil", err)
	}
}

// TestLinkOpenFlags pins the kernel behaviour the walk relies on: a directory open with
// O_PATH|O_DIRECTORY|O_NOFOLLOW of a link fails rather than returning the link.
func TestLinkOpenFlags(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dirfd, err := unix.Open(b.ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dirfd)
	for _, name := range []string{"link-in", "link-out"} {
		fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
			t.Errorf("%s: opened a link as a directory", name)
		} else if !changed(err) {
			t.Errorf("%s: got %v, want an errno that reads as changed", name, err)
		}
	}
}

func TestIsRefusal(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		&OutsideError{Path: "x"}, &SymlinkError{Path: "x", Component: "x"},
		&ProtectedError{Path: "x", Protected: "~/.ssh"}, &SwappedError{Path: "x"},
		&GitDirError{Path: "x"}, &NotDirError{Path: "x", Component: "x"},
		&NotRegularError{Path: "x", Kind: "a directory"},
	} {
		if !IsRefusal(err) {
			t.Errorf("%T: got not a refusal", err)
		}
		s := err.Error()
		if strings.Count(s, ".") < 1 || !strings.HasSuffix(s, ".") || strings.Contains(s, "confine:") {
			t.Errorf("%T: %q is not one plain sentence", err, s)
		}
	}
	if IsRefusal(errors.New("disk on fire")) || IsRefusal(fs.ErrNotExist) {
		t.Error("a fault reads as a refusal")
	}
}
