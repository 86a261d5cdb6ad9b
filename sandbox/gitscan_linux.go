package sandbox

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A boxed command writes its workspace, and git, run there later by the owner outside any
// box (their shell prompt, their editor, a plain `git status`), obeys what it finds: a
// repository's config names programs to run (core.fsmonitor, hooks, filter drivers). So
// every place git would take for a repository is guarded (gitguard.go): the ones that exist
// when the box is made are mounted read-only in it, and any that appears while it runs is
// quarantined when it ends. This file finds them.

// gitKind is what kind of place git would take for a repository.
type gitKind uint8

const (
	gitDir  gitKind = iota + 1 // a directory named .git
	gitFile                    // a file named .git: "gitdir: <path>" sends git there
	gitLink                    // a symbolic link named .git
	gitBare                    // a directory laid out as a git directory (HEAD, objects, refs): a bare repository
)

// String says what the place is, for the report.
func (k gitKind) String() string {
	switch k {
	case gitDir:
		return "a .git directory"
	case gitFile:
		return "a .git file"
	case gitLink:
		return "a .git link"
	case gitBare:
		return "a bare repository"
	}
	return "a git entry"
}

// gitEntry is one place git would take for a repository, found in a workspace.
type gitEntry struct {
	Rel  string  `json:"rel"` // relative to the workspace, never "" (the workspace itself is not one)
	Kind gitKind `json:"kind"`
	dev  uint64
	ino  uint64
}

// same reports whether e and o are the same file, of the same kind, at the same place.
func (e gitEntry) same(o gitEntry) bool {
	return e.Rel == o.Rel && e.Kind == o.Kind && e.dev == o.dev && e.ino == o.ino
}

// maxScan bounds a scan: a workspace with more entries than this is not looked at beyond
// them, and the report says so.
const maxScan = 2_000_000

// scan is what scanGit found.
type scan struct {
	entries []gitEntry
	seen    int    // directory entries looked at
	partial string // when some of the workspace was not looked at: what and why
}

// scanGit walks the workspace open at root (a directory descriptor) and lists every place
// git would take for a repository, but the workspace's own .git: each entry named .git,
// whatever it is, and each directory holding HEAD, objects and refs. It follows no link,
// stays on the workspace's file system (a mount inside it is read-only in every box), and
// does not walk into what it lists. Every directory is opened by openat2 beneath root with no
// link anywhere on the way, so a directory swapped for a link while it walks (another box of
// the same workspace may be running) leads nowhere. It reads names and types only
// (getdents), one system call per few hundred entries, node_modules and the like included:
// nothing is skipped for its name.
func scanGit(root int) scan {
	var s scan
	var st unix.Stat_t
	if err := unix.Fstat(root, &st); err != nil {
		s.partial = fmt.Sprintf("the workspace could not be looked at: %v", err)
		return s
	}
	buf := make([]byte, 64<<10)
	queue := []string{"."}
	for len(queue) > 0 && s.partial == "" {
		rel := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		fd, err := openBeneath(root, rel, unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ELOOP) {
				continue // gone, replaced, or another file system: nothing of this workspace's
			}
			s.partial = fmt.Sprintf("%s could not be looked at: %v", rel, err)
			break
		}
		names, types, err := readNames(fd, buf)
		if err != nil {
			_ = unix.Close(fd)
			s.partial = fmt.Sprintf("%s could not be read: %v", rel, err)
			break
		}
		s.seen += len(names)
		if s.seen > maxScan {
			_ = unix.Close(fd)
			s.partial = fmt.Sprintf("the workspace has more than %d entries; those past them were not looked at", maxScan)
			break
		}
		if rel != "." && slices.Contains(names, "HEAD") && slices.Contains(names, "objects") && slices.Contains(names, "refs") {
			if e, ok := identify(fd, ".", rel, gitBare); ok {
				s.entries = append(s.entries, e)
			}
			_ = unix.Close(fd)
			continue
		}
		for i, name := range names {
			child := name
			if rel != "." {
				child = rel + "/" + name
			}
			typ := types[i]
			if typ == unix.DT_UNKNOWN {
				var cst unix.Stat_t
				if unix.Fstatat(fd, name, &cst, unix.AT_SYMLINK_NOFOLLOW) != nil {
					continue
				}
				typ = dtype(cst.Mode)
			}
			if name == ".git" {
				if rel == "." {
					continue // the workspace's own: guarded on its own
				}
				kind := gitFile
				switch typ {
				case unix.DT_DIR:
					kind = gitDir
				case unix.DT_LNK:
					kind = gitLink
				}
				if e, ok := identify(fd, name, child, kind); ok {
					s.entries = append(s.entries, e)
				}
				continue
			}
			if typ == unix.DT_DIR {
				queue = append(queue, child)
			}
		}
		_ = unix.Close(fd)
	}
	return s
}

// identify stats name in dir without following a link and returns it as an entry.
func identify(dir int, name, rel string, kind gitKind) (gitEntry, bool) {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return gitEntry{}, false
	}
	return gitEntry{Rel: rel, Kind: kind, dev: st.Dev, ino: st.Ino}, true
}

// openBeneath opens rel beneath the directory root: no link on the way (the last component
// included), no ".." above root, no mount crossed.
func openBeneath(root int, rel string, flags int) (int, error) {
	return unix.Openat2(root, rel, &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_XDEV,
	})
}

// readNames reads a directory's entries, names and types (DT_*), without "." and "..".
func readNames(fd int, buf []byte) ([]string, []uint8, error) {
	var names []string
	var types []uint8
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if n <= 0 {
			return names, types, nil
		}
		for off := 0; off < n; {
			d := (*unix.Dirent)(unsafe.Pointer(&buf[off]))
			if d.Reclen == 0 {
				return nil, nil, errors.New("a malformed directory entry")
			}
			nameBytes := buf[off+int(unsafe.Offsetof(d.Name)) : off+int(d.Reclen)]
			if i := slices.Index(nameBytes, 0); i >= 0 {
				nameBytes = nameBytes[:i]
			}
			off += int(d.Reclen)
			name := string(nameBytes)
			if name == "." || name == ".." {
				continue
			}
			names = append(names, name)
			types = append(types, d.Type)
		}
	}
}

// dtype turns a stat mode into a directory entry type.
func dtype(mode uint32) uint8 {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFLNK:
		return unix.DT_LNK
	case unix.S_IFREG:
		return unix.DT_REG
	}
	return unix.DT_UNKNOWN
}

// parentOf splits rel into its directory ("." for the top) and its last name.
func parentOf(rel string) (string, string) {
	dir, name := path.Split(rel)
	if dir == "" {
		return ".", name
	}
	return path.Clean(dir), name
}
