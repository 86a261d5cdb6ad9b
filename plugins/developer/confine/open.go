package confine

import (
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// resolveBeneath are the openat2 resolve flags: nothing above the root, no symbolic link
// anywhere in the path, no /proc magic link.
const resolveBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// Open opens a regular file for reading. path is validated as Resolve does; then the file
// is opened again from the root's descriptor, with O_NOFOLLOW and without following any
// link on the way (openat2, or the component walk: see the package doc), and the open
// descriptor's (dev, ino) is compared with what validation found. A path that changed in
// between is refused with a SwappedError before anything is read. The caller closes the
// file.
func (r *Root) Open(cwd, path string) (*os.File, Path, error) {
	raw, err := r.components(cwd, path)
	if err != nil {
		return nil, Path{}, err
	}
	rootfd, err := r.openRoot()
	if err != nil {
		return nil, Path{}, err
	}
	defer unix.Close(rootfd)
	p, err := r.validate(rootfd, path, raw)
	if err != nil {
		return nil, Path{}, err
	}
	if !p.Exists {
		return nil, p, &fs.PathError{Op: "open", Path: p.Rel, Err: fs.ErrNotExist}
	}
	if !p.Mode.IsRegular() {
		return nil, p, &NotRegularError{Path: path, Kind: kindOf(p.Mode)}
	}
	if r.afterValidate != nil {
		r.afterValidate(p.Rel)
	}
	// O_NONBLOCK: a file swapped for a named pipe must not block the open; on a regular
	// file it changes nothing.
	fd, err := r.openBeneath(rootfd, p.comps, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC)
	if err != nil {
		if changed(err) {
			return nil, p, &SwappedError{Path: path}
		}
		return nil, p, fmt.Errorf("confine: open %q: %w", p.Rel, err)
	}
	if err := checkID(fd, p.id, unix.S_IFREG); err != nil {
		unix.Close(fd)
		return nil, p, &SwappedError{Path: path}
	}
	return os.NewFile(uintptr(fd), p.Abs), p, nil
}

// openBeneath opens comps (components from validate: no `.`, no `..`) beneath rootfd with
// flags, following no symbolic link anywhere. The answer's identity is the caller's to
// check. An error is the system's errno, for the caller to classify with changed.
func (r *Root) openBeneath(rootfd int, comps []string, flags int) (int, error) {
	if len(comps) == 0 {
		return unix.Openat(rootfd, ".", flags&^unix.O_NOFOLLOW, 0)
	}
	if r.openat2 {
		rel := strings.Join(comps, "/")
		for range 8 {
			fd, err := unix.Openat2(rootfd, rel, &unix.OpenHow{Flags: uint64(flags), Resolve: resolveBeneath})
			// EAGAIN: a rename raced the resolution; the kernel asks for a retry.
			if err != unix.EAGAIN && err != unix.EINTR {
				return fd, err
			}
		}
		return -1, unix.EAGAIN
	}
	dirfd, err := walkDirs(rootfd, comps[:len(comps)-1], false)
	if err != nil {
		return -1, err
	}
	if dirfd != rootfd {
		defer unix.Close(dirfd)
	}
	return unix.Openat(dirfd, comps[len(comps)-1], flags|unix.O_NOFOLLOW, 0)
}

// walkDirs enters comps one directory at a time from rootfd, each with
// O_PATH|O_DIRECTORY|O_NOFOLLOW from the previous one's descriptor, so a link anywhere is
// an error (ENOTDIR) rather than followed. With create, a missing directory is made (0755).
// It returns rootfd itself for no components; any other descriptor is the caller's.
func walkDirs(rootfd int, comps []string, create bool) (int, error) {
	fd := rootfd
	for _, c := range comps {
		next, err := unix.Openat(fd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ENOENT && create {
			if err = unix.Mkdirat(fd, c, 0o755); err == nil || err == unix.EEXIST {
				next, err = unix.Openat(fd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		if fd != rootfd {
			unix.Close(fd)
		}
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}
