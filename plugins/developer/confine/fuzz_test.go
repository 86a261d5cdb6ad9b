package confine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// FuzzResolve feeds arbitrary cwd and path strings to Resolve and Open, under both
// mechanisms, on a tree with links inside and out. The properties: nothing panics; an
// accepted path is a clean relative path under the root with no symbolic link in any
// component that exists; what Open returns is that very file.
func FuzzResolve(f *testing.F) {
	base := f.TempDir()
	ws := filepath.Join(base, "ws")
	home := filepath.Join(base, "home")
	for _, d := range []string{ws + "/src/deep", ws + "/.git", home + "/.ssh", base + "/outside"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for _, p := range []string{ws + "/a.txt", ws + "/src/main.go", ws + "/src/deep/x", base + "/outside/secret"} {
		if err := os.WriteFile(p, []byte(p), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		ws + "/in":           "src",
		ws + "/out":          "../outside",
		ws + "/abs":          base + "/outside/secret",
		ws + "/src/up":       "..",
		ws + "/src/deep/top": "../../..",
		home + "/.aws":       ws + "/src/deep",
	} {
		if err := os.Symlink(target, link); err != nil {
			f.Fatal(err)
		}
	}
	roots := make([]*Root, 2)
	for i := range roots {
		r, err := New(ws, Options{Home: home})
		if err != nil {
			f.Fatal(err)
		}
		r.openat2 = i == 0 && haveOpenat2()
		roots[i] = r
	}
	canon := roots[0].Dir()

	for _, seed := range [][2]string{
		{"", "a.txt"}, {"src", "../a.txt"}, {"", "in/main.go"}, {"src/deep", "top/outside/secret"},
		{"", "../outside/secret"}, {"", "/etc/passwd"}, {"", ws + "/src/../a.txt"}, {"src", "up/up/x"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, cwd, path string) {
		for _, r := range roots {
			p, err := r.Resolve(cwd, path)
			if err != nil {
				continue
			}
			if p.Rel != "." && (!filepath.IsLocal(p.Rel) || filepath.Clean(p.Rel) != p.Rel) {
				t.Fatalf("Resolve(%q, %q): Rel %q is not a clean local path", cwd, path, p.Rel)
			}
			if p.Abs != filepath.Join(canon, p.Rel) || !within(p.Abs, canon) {
				t.Fatalf("Resolve(%q, %q): Abs %q is not under %q", cwd, path, p.Abs, canon)
			}
			// ~/.aws is a link to src/deep, so src/deep is protected.
			if _, bad := r.protectedAt(p.Abs); bad || p.Rel == "src/deep" || strings.HasPrefix(p.Rel, "src/deep/") {
				t.Fatalf("Resolve(%q, %q) = %q, a protected path", cwd, path, p.Rel)
			}
			// No component that exists is a link.
			walked := canon
			for _, c := range splitComponents(p.Rel) {
				walked = filepath.Join(walked, c)
				info, err := os.Lstat(walked)
				if err != nil {
					break
				}
				if info.Mode()&os.ModeSymlink != 0 {
					t.Fatalf("Resolve(%q, %q) = %q passes the link %q", cwd, path, p.Rel, walked)
				}
			}
			file, _, err := r.Open(cwd, path)
			if err != nil {
				continue
			}
			var got, want unix.Stat_t
			if err := unix.Fstat(int(file.Fd()), &got); err != nil {
				t.Fatal(err)
			}
			file.Close()
			if err := unix.Lstat(p.Abs, &want); err != nil || got.Dev != want.Dev || got.Ino != want.Ino {
				t.Fatalf("Open(%q, %q) opened something other than %q (%v)", cwd, path, p.Abs, err)
			}
		}
	})
}
