package permission

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeLinks is an in-memory tree for Within: directories, files and symbolic links by
// absolute path.
type fakeLinks struct {
	dirs  map[string]bool
	links map[string]string
	files map[string]bool
	fail  map[string]bool // Lstat fails with a permission error
}

func (f fakeLinks) Lstat(name string) (fs.FileInfo, error) {
	switch {
	case f.fail[name]:
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrPermission}
	case f.links[name] != "":
		return fakeInfo{name: path.Base(name), mode: fs.ModeSymlink}, nil
	case f.dirs[name]:
		return fakeInfo{name: path.Base(name), mode: fs.ModeDir}, nil
	case f.files[name]:
		return fakeInfo{name: path.Base(name)}, nil
	}
	return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrNotExist}
}

func (f fakeLinks) Readlink(name string) (string, error) {
	if t, ok := f.links[name]; ok {
		return t, nil
	}
	return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
}

type fakeInfo struct {
	name string
	mode fs.FileMode
}

func (i fakeInfo) Name() string       { return i.name }
func (i fakeInfo) Size() int64        { return 0 }
func (i fakeInfo) Mode() fs.FileMode  { return i.mode }
func (i fakeInfo) ModTime() time.Time { return time.Time{} }
func (i fakeInfo) IsDir() bool        { return i.mode.IsDir() }
func (i fakeInfo) Sys() any           { return nil }

func testTree() fakeLinks {
	return fakeLinks{
		dirs: map[string]bool{"/ws": true, "/ws/src": true, "/out": true, "/real": true, "/real/ws": true, "/locked": true},
		links: map[string]string{
			"/ws/escape":   "/out",              // absolute, leaves
			"/ws/rel-out":  "../out",            // relative, leaves
			"/ws/rel-in":   "src",               // relative, stays
			"/ws/abs-in":   "/ws/src",           // absolute, stays
			"/ws/dotdot":   "src/../../out",     // climbs after following
			"/ws/src/up":   "..",                // the workspace itself
			"/ws/loop":     "/ws/loop2",         // a loop
			"/ws/loop2":    "/ws/loop",          //
			"/ws/chain":    "/ws/chain2",        // a chain that ends outside
			"/ws/chain2":   "/ws/escape/x",      //
			"/link-to-ws":  "/real/ws",          // a root that is itself a link
			"/real/ws/out": "../../out",         //
			"/ws/src/self": "/ws/src/self/../x", // refers through itself
		},
		files: map[string]bool{"/ws/main.go": true, "/out/secret": true},
		fail:  map[string]bool{"/locked/x": true},
	}
}

func TestWithinLinks(t *testing.T) {
	t.Parallel()
	tree := testTree()
	tests := []struct {
		path, root string
		want       bool
		wantErr    bool
	}{
		{"/ws", "/ws", true, false},
		{"/ws/main.go", "/ws", true, false},
		{"/ws/src/a/b/new.txt", "/ws", true, false},
		{"/ws/./src//x", "/ws", true, false},
		{"/ws/src/../main.go", "/ws", true, false},
		{"/ws/../out/secret", "/ws", false, false},
		{"/ws/..", "/ws", false, false},
		{"/wsx/a", "/ws", false, false},
		{"/w", "/ws", false, false},
		{"/out/secret", "/ws", false, false},
		{"/ws/escape", "/ws", false, false},
		{"/ws/escape/secret", "/ws", false, false},
		{"/ws/rel-out/secret", "/ws", false, false},
		{"/ws/rel-in/x", "/ws", true, false},
		{"/ws/abs-in/x", "/ws", true, false},
		{"/ws/dotdot/secret", "/ws", false, false},
		{"/ws/src/up/main.go", "/ws", true, false},
		{"/ws/chain", "/ws", false, false},
		{"/ws/missing/../escape/secret", "/ws", false, false},
		{"/ws/main.go/x", "/ws", true, false},
		{"/link-to-ws/a", "/real/ws", true, false},
		{"/real/ws/a", "/link-to-ws", true, false},
		{"/link-to-ws/out/secret", "/link-to-ws", false, false},
		{"/anything", "/", true, false},
		{"/ws/loop", "/ws", false, true},
		{"/ws/src/self", "/ws", false, true},
		{"/locked/x", "/", false, true},
		{"ws/main.go", "/ws", false, true},
		{"/ws/main.go", "ws", false, true},
		{"", "/ws", false, true},
		{"/ws/a\x00b", "/ws", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.path+"~"+tt.root, func(t *testing.T) {
			got, err := WithinLinks(tree, tt.path, tt.root)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("got %v, %v, want %v, error %v", got, err, tt.want, tt.wantErr)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "permission: resolve ") {
				t.Errorf("got error %q, want it to say what was resolved", err)
			}
		})
	}
}

// TestWithin runs the same rules on the real filesystem.
func TestWithin(t *testing.T) {
	t.Parallel()
	b := setup(t)
	loop := filepath.Join(b.workspace, "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(b.workspace, "inner")
	if err := os.Symlink("sub", inner); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path    string
		want    bool
		wantErr error
	}{
		{b.workspace, true, nil},
		{filepath.Join(b.workspace, "new", "file"), true, nil},
		{filepath.Join(inner, "x"), true, nil},
		{filepath.Join(b.escape, "x"), false, nil},
		{b.escape, false, nil},
		{filepath.Join(b.workspace, "..", "elsewhere"), false, nil},
		{b.outside, false, nil},
		{filepath.Join(loop, "x"), false, errTooManyLinks},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := Within(tt.path, b.workspace)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("got %v, %v, want %v, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// FuzzWithin: resolution never panics or runs away, a relative path is never inside, and
// a path is inside only when its resolved form is the root or under it.
func FuzzWithin(f *testing.F) {
	for _, s := range []string{"/ws/main.go", "/ws/escape/x", "/ws/../out", "ws", "/ws/loop", "/link-to-ws/out/secret", "/ws/src/up/up/up"} {
		f.Add(s, "/ws")
	}
	tree := testTree()
	f.Fuzz(func(t *testing.T, p, root string) {
		in, err := WithinLinks(tree, p, root)
		if err != nil && in {
			t.Errorf("got inside with an error: %v", err)
		}
		if (!filepath.IsAbs(p) || !filepath.IsAbs(root)) && in {
			t.Errorf("path %q, root %q: got inside, want a relative path never inside", p, root)
		}
		if !in {
			return
		}
		rp, err1 := resolve(tree, p)
		rr, err2 := resolve(tree, root)
		if err1 != nil || err2 != nil {
			t.Fatalf("inside but resolve fails: %v, %v", err1, err2)
		}
		if rr != "/" && rp != rr && !strings.HasPrefix(rp, rr+"/") {
			t.Errorf("path %q (%q) inside %q (%q)", p, rp, root, rr)
		}
		if strings.HasPrefix(rp, "/out") && !strings.HasPrefix(rr, "/out") && rr != "/" {
			t.Errorf("path %q resolves to %q outside, but is inside %q", p, rp, root)
		}
	})
}
