package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Path is a path inside the workspace that validation accepted.
type Path struct {
	// Rel is the path relative to the workspace, slash-separated, with no `.` or `..`;
	// "." is the workspace itself.
	Rel string
	// Abs is Rel under Root.Dir.
	Abs string
	// Exists reports whether the path existed when it was validated. A path that does not
	// exist yet (a file about to be written, with its parents) is valid.
	Exists bool
	// Mode is its type and permission bits, when it exists.
	Mode fs.FileMode
	// NeedsGate is true for .gitmodules and .gitattributes, at any depth: they decide what
	// git itself runs, so §4 gates a write to them in every mode. So are the files hook
	// managers read their commands from when git runs their hook (lefthook.yml,
	// .pre-commit-config.yaml, …). The tier is the plugin's decision; this is only the fact.
	NeedsGate bool
	// InGit is true when a component is named .git (the workspace's own path included):
	// such a path may be read, and is never written.
	InGit bool

	given        string   // the path as the caller gave it, for errors
	comps        []string // Rel split into its components; empty for the root
	id           fileID   // what validation found at the path, when Exists
	parent       fileID   // what validation found at its parent, when parentExists
	parentExists bool
}

// fileID is what identifies a file on the machine: its device and inode numbers.
type fileID struct{ dev, ino uint64 }

func idOf(st *unix.Stat_t) fileID { return fileID{dev: uint64(st.Dev), ino: st.Ino} }

// Resolve validates path, given relative to cwd (itself relative to the workspace; "" is
// the workspace), or absolute inside the workspace. It walks one component at a time from
// the root and refuses: a path that climbs out with `..` ([OutsideError]), an absolute path
// elsewhere ([OutsideError]), any symbolic link on the way or at the end ([SymlinkError]),
// a path through something that is not a directory ([NotDirError]), and a path at or under
// a protected path ([ProtectedError]). `..` is taken after the component before it is
// checked, so `a/../b` is b only when a is a real directory, as the kernel would read it.
// A path whose last components do not exist yet is valid, with Exists false.
func (r *Root) Resolve(cwd, path string) (Path, error) {
	raw, err := r.components(cwd, path)
	if err != nil {
		return Path{}, err
	}
	rootfd, err := r.openRoot()
	if err != nil {
		return Path{}, err
	}
	defer unix.Close(rootfd)
	return r.validate(rootfd, path, raw)
}

// components splits cwd and path into the raw components to walk from the root, `..`
// included, with the root's own prefix taken off an absolute argument.
func (r *Root) components(cwd, path string) ([]string, error) {
	if strings.IndexByte(cwd, 0) >= 0 || strings.IndexByte(path, 0) >= 0 {
		return nil, fmt.Errorf("confine: %q holds a NUL byte: %w", path, fs.ErrInvalid)
	}
	if filepath.IsAbs(path) {
		return r.stripRoot(path)
	}
	var raw []string
	if filepath.IsAbs(cwd) {
		c, err := r.stripRoot(cwd)
		if err != nil {
			return nil, err
		}
		raw = c
	} else {
		raw = splitComponents(cwd)
	}
	return append(raw, splitComponents(path)...), nil
}

// stripRoot returns the components of the absolute path p below the workspace, as the
// owner named it or as its links resolve. It does not clean p first: a `..` after the
// root's prefix is left for the walk, which knows whether what precedes it is a directory.
func (r *Root) stripRoot(p string) ([]string, error) {
	comps := splitComponents(p)
	for _, root := range []string{r.canon, r.named} {
		rc := splitComponents(root)
		if len(comps) >= len(rc) && equal(comps[:len(rc)], rc) {
			return comps[len(rc):], nil
		}
	}
	return nil, &OutsideError{Path: p}
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// splitComponents splits a slash-separated path, dropping empty and `.` components.
func splitComponents(p string) []string {
	var out []string
	for c := range strings.SplitSeq(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// openRoot opens the workspace directory. Its last component is not followed: a workspace
// replaced by a link since New is not a workspace any more.
func (r *Root) openRoot() (int, error) {
	fd, err := unix.Open(r.canon, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("confine: open workspace %q: %w", r.canon, err)
	}
	return fd, nil
}

// level is one directory the validation walk has entered.
type level struct {
	fd   int
	name string
	id   fileID
}

// validate walks raw from rootfd as Resolve describes. given is the path as the caller
// gave it, for errors.
func (r *Root) validate(rootfd int, given string, raw []string) (Path, error) {
	var rootSt unix.Stat_t
	if err := unix.Fstat(rootfd, &rootSt); err != nil {
		return Path{}, fmt.Errorf("confine: stat workspace %q: %w", r.canon, err)
	}
	stack := []level{{fd: rootfd, id: idOf(&rootSt)}}
	defer func() {
		for _, l := range stack[1:] {
			unix.Close(l.fd)
		}
	}()
	var (
		names   []string // the components of the result so far
		missing bool     // a component did not exist: the rest is taken as written
		final   *unix.Stat_t
	)
	for i, c := range raw {
		if c == ".." {
			if missing {
				return Path{}, &fs.PathError{Op: "resolve", Path: given, Err: fs.ErrNotExist}
			}
			if len(stack) == 1 {
				return Path{}, &OutsideError{Path: given}
			}
			top := stack[len(stack)-1]
			unix.Close(top.fd)
			stack = stack[:len(stack)-1]
			names = names[:len(names)-1]
			continue
		}
		names = append(names, c)
		if missing {
			// Nothing below here exists, and no .. can follow: the whole path is checked
			// against the protected paths once, after the loop (a path under a protected
			// one is under it whichever of its prefixes is).
			continue
		}
		rel := strings.Join(names, "/")
		if p, ok := r.protectedAt(filepath.Join(r.canon, rel)); ok {
			return Path{}, &ProtectedError{Path: given, Protected: p}
		}
		top := stack[len(stack)-1]
		var st unix.Stat_t
		err := unix.Fstatat(top.fd, c, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.ENOENT {
			missing = true
			continue
		}
		if err != nil {
			return Path{}, fmt.Errorf("confine: stat %q: %w", rel, err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			return Path{}, &SymlinkError{Path: given, Component: rel}
		case unix.S_IFDIR:
			fd, err := unix.Openat(top.fd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				if changed(err) {
					return Path{}, &SwappedError{Path: given}
				}
				return Path{}, fmt.Errorf("confine: open %q: %w", rel, err)
			}
			stack = append(stack, level{fd: fd, name: c, id: idOf(&st)})
			if err := checkID(fd, idOf(&st), unix.S_IFDIR); err != nil {
				return Path{}, &SwappedError{Path: given}
			}
		default:
			if i < len(raw)-1 {
				return Path{}, &NotDirError{Path: given, Component: rel}
			}
			final = &st
		}
	}

	if missing {
		if p, ok := r.protectedAt(filepath.Join(r.canon, strings.Join(names, "/"))); ok {
			return Path{}, &ProtectedError{Path: given, Protected: p}
		}
	}
	p := Path{given: given, comps: names, Rel: ".", Abs: r.canon}
	if len(names) > 0 {
		p.Rel = strings.Join(names, "/")
		p.Abs = filepath.Join(r.canon, p.Rel)
		p.NeedsGate = isGateName(names[len(names)-1])
	}
	p.InGit = r.rootInGit
	for _, n := range names {
		if isGitName(n) {
			p.InGit = true
		}
	}
	top := stack[len(stack)-1]
	dirs := len(stack) - 1 // the names that are directories the walk entered
	switch {
	case final != nil:
		p.Exists, p.Mode, p.id = true, fileMode(final), idOf(final)
		p.parent, p.parentExists = top.id, true
	case missing:
		p.parent, p.parentExists = top.id, len(names) == dirs+1
	default: // the path is the directory at the top of the stack
		var st unix.Stat_t
		if err := unix.Fstat(top.fd, &st); err != nil {
			return Path{}, fmt.Errorf("confine: stat %q: %w", p.Rel, err)
		}
		p.Exists, p.Mode, p.id = true, fileMode(&st), top.id
		if len(stack) >= 2 {
			p.parent, p.parentExists = stack[len(stack)-2].id, true
		}
	}
	return p, nil
}

// changed reports whether err from opening something validation just saw means it changed
// in between: it became a link (ELOOP, or ENOTDIR for O_DIRECTORY), it left the root
// (EXDEV from RESOLVE_BENEATH), or it went away.
func changed(err error) bool {
	return err == unix.ELOOP || err == unix.ENOTDIR || err == unix.EXDEV || err == unix.ENOENT
}

// checkID fails when fd is not the file validation recorded as want, of type kind
// (unix.S_IFDIR or unix.S_IFREG).
func checkID(fd int, want fileID, kind uint32) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if idOf(&st) != want || st.Mode&unix.S_IFMT != kind {
		return errIdentity
	}
	return nil
}

// errIdentity is checkID's answer for a descriptor that is not the file validated.
var errIdentity = errors.New("confine: the descriptor is not the file that was validated")

// isGitName reports whether a component names git's own directory. The comparison ignores
// case: on a case-insensitive filesystem .GIT is .git.
func isGitName(c string) bool { return strings.EqualFold(c, ".git") }

// isGateName reports whether a file name is one whose contents decide what git runs:
// .gitmodules and .gitattributes, and the files hook managers read their commands from.
func isGateName(c string) bool {
	if strings.EqualFold(c, ".gitmodules") || strings.EqualFold(c, ".gitattributes") {
		return true
	}
	for _, f := range hookManagerFiles {
		if strings.EqualFold(c, f) {
			return true
		}
	}
	return false
}

// fileMode converts a stat mode to an fs.FileMode: the type and the permission bits.
func fileMode(st *unix.Stat_t) fs.FileMode {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	return m
}

// kindOf names what a non-regular file is, for a NotRegularError.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "something else"
}
