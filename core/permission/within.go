package permission

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Links is the part of a filesystem that Within reads: the kind of a path without
// following it, and the target of a symbolic link. OSLinks is the real filesystem.
type Links interface {
	// Lstat describes name without following a final symbolic link.
	Lstat(name string) (fs.FileInfo, error)
	// Readlink returns the target of the symbolic link name.
	Readlink(name string) (string, error)
}

// OSLinks reads the real filesystem.
type OSLinks struct{}

// Lstat calls os.Lstat.
func (OSLinks) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }

// Readlink calls os.Readlink.
func (OSLinks) Readlink(name string) (string, error) { return os.Readlink(name) }

var _ Links = OSLinks{}

// maxLinks bounds the symbolic links followed while resolving one path, as the kernel
// does (ELOOP).
const maxLinks = 40

// errTooManyLinks is returned for a path that needs more than maxLinks links.
var errTooManyLinks = errors.New("too many levels of symbolic links")

// Within reports whether path is root or inside it, on the real filesystem, after
// following symbolic links component by component (the seed's within?/2). Both must be
// absolute. A link inside root that points outside it is not inside; a path that does not
// exist yet is inside when its existing part is. See WithinLinks.
func Within(path, root string) (bool, error) {
	return WithinLinks(OSLinks{}, path, root)
}

// WithinLinks is Within on the filesystem that l reads. Both paths are resolved the same
// way: from "/", one component at a time, a symbolic link replaced by its target (an
// absolute target restarts from "/", a relative one continues from the link's
// directory), ".." taken after the links before it are followed, and a component that
// does not exist kept as written. An error (a relative path, a loop, a component that
// cannot be read) means the answer is unknown, and ok is false.
func WithinLinks(l Links, path, root string) (ok bool, err error) {
	p, err := resolve(l, path)
	if err != nil {
		return false, fmt.Errorf("permission: resolve path %q: %w", path, err)
	}
	r, err := resolve(l, root)
	if err != nil {
		return false, fmt.Errorf("permission: resolve root %q: %w", root, err)
	}
	if r == string(filepath.Separator) {
		return true, nil
	}
	return p == r || strings.HasPrefix(p, r+string(filepath.Separator)), nil
}

// resolve follows the symbolic links in an absolute path, as WithinLinks describes.
func resolve(l Links, p string) (string, error) {
	if p == "" || !filepath.IsAbs(p) {
		return "", errors.New("not an absolute path")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("holds a NUL byte")
	}
	sep := string(filepath.Separator)
	resolved := sep
	rest := splitPath(p)
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		if c == ".." {
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := l.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			resolved = next
			continue
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		if links > maxLinks {
			return "", errTooManyLinks
		}
		target, err := l.Readlink(next)
		if err != nil {
			return "", err
		}
		if target == "" {
			return "", fmt.Errorf("symbolic link %q has an empty target", next)
		}
		if filepath.IsAbs(target) {
			resolved = sep
		}
		rest = append(splitPath(target), rest...)
	}
	return resolved, nil
}

// splitPath splits a path into its components, without empty ones and ".".
func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, string(filepath.Separator)) {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}
