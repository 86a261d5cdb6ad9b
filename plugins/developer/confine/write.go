package confine

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// newFileMode is the mode of a file Write creates.
const newFileMode = 0o644

// Written describes a completed Write.
type Written struct {
	// Path is the path written, as validation found it before the write.
	Path
	// Created is true when the file did not exist before.
	Created bool
}

// Write replaces the file at path with data, atomically: data goes to a temporary file
// created in the target's own directory (through that directory's descriptor), is synced,
// and is renamed over the target with renameat on the same descriptor, which never follows
// a link at the destination; then the directory is synced. Readers see the old file or the
// new one, never a mixture, and a failure leaves the target as it was and no temporary file
// behind.
//
// path is validated as Resolve does, and further: a path with a component named .git is
// refused (GitDirError), and so is one under a directory git runs hooks from (HooksDirError,
// see WithHooks); a directory or other non-regular file is refused
// (NotRegularError); missing parent directories are created. The target's permission bits
// are kept when it existed (without setuid, setgid and sticky, which the kernel clears on
// an ordinary write too), and so are its owner and group where the process may set them;
// a new file gets 0644. A directory or target that changed between validation and the write
// is refused with a SwappedError. Path.NeedsGate says whether the write needed a gate; the
// caller decides that before calling.
func (r *Root) Write(cwd, path string, data []byte) (Written, error) {
	raw, err := r.components(cwd, path)
	if err != nil {
		return Written{}, err
	}
	rootfd, err := r.openRoot()
	if err != nil {
		return Written{}, err
	}
	defer unix.Close(rootfd)
	p, err := r.validate(rootfd, path, raw)
	if err != nil {
		return Written{}, err
	}
	if p.InGit {
		return Written{}, &GitDirError{Path: path}
	}
	if dir, in, err := r.InHooks(p); err != nil {
		return Written{}, err
	} else if in {
		return Written{}, &HooksDirError{Path: path, Dir: r.display(dir)}
	}
	if len(p.comps) == 0 || p.Exists && !p.Mode.IsRegular() {
		return Written{}, &NotRegularError{Path: path, Kind: kindOf(p.Mode)}
	}
	if r.afterValidate != nil {
		r.afterValidate(p.Rel)
	}

	dirs, name := p.comps[:len(p.comps)-1], p.comps[len(p.comps)-1]
	var dirfd int
	if p.parentExists {
		dirfd, err = r.openBeneath(rootfd, dirs, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
		if err == nil && checkID(dirfd, p.parent, unix.S_IFDIR) != nil {
			unix.Close(dirfd)
			return Written{}, &SwappedError{Path: path}
		}
	} else {
		dirfd, err = walkDirs(rootfd, dirs, true)
	}
	if err != nil {
		if changed(err) {
			return Written{}, &SwappedError{Path: path}
		}
		return Written{}, fmt.Errorf("confine: open the directory of %q: %w", p.Rel, err)
	}
	if dirfd != rootfd {
		defer unix.Close(dirfd)
	}

	// The target now must be what validation saw: there and the same file, or absent.
	var st unix.Stat_t
	err = unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == unix.ENOENT:
		if p.Exists {
			return Written{}, &SwappedError{Path: path}
		}
	case err != nil:
		return Written{}, fmt.Errorf("confine: stat %q: %w", p.Rel, err)
	case !p.Exists || idOf(&st) != p.id || st.Mode&unix.S_IFMT != unix.S_IFREG:
		return Written{}, &SwappedError{Path: path}
	}

	tmp, tmpfd, err := createTemp(dirfd)
	if err != nil {
		return Written{}, fmt.Errorf("confine: create a temporary file beside %q: %w", p.Rel, err)
	}
	renamed := false
	defer func() {
		if !renamed {
			unix.Unlinkat(dirfd, tmp, 0)
		}
	}()
	if err := fill(tmpfd, data, p.Exists, &st); err != nil {
		return Written{}, fmt.Errorf("confine: write %q: %w", p.Rel, err)
	}
	if r.beforeRename != nil {
		r.beforeRename(p.Rel)
	}
	if err := unix.Renameat(dirfd, tmp, dirfd, name); err != nil {
		return Written{}, fmt.Errorf("confine: rename over %q: %w", p.Rel, err)
	}
	renamed = true
	if err := syncDir(dirfd); err != nil {
		return Written{}, fmt.Errorf("confine: sync the directory of %q: %w", p.Rel, err)
	}
	return Written{Path: p, Created: !p.Exists}, nil
}

// createTemp creates an empty, private file with a fresh name in dirfd.
func createTemp(dirfd int) (string, int, error) {
	for range 16 {
		var b [8]byte
		rand.Read(b[:])
		name := ".buddi-" + hex.EncodeToString(b[:]) + ".tmp"
		fd, err := unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == unix.EEXIST {
			continue
		}
		return name, fd, err
	}
	return "", -1, unix.EEXIST
}

// fill writes data to the temporary file fd, gives it the target's mode and owner (old,
// when existed) or a new file's mode, syncs it and closes it.
func fill(fd int, data []byte, existed bool, old *unix.Stat_t) error {
	f := os.NewFile(uintptr(fd), "temporary file")
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return err
	}
	mode := uint32(newFileMode)
	if existed {
		mode = old.Mode & 0o777
		// Best effort: only a privileged process may give a file away, and a file the
		// owner wrote already has the owner's uid.
		if int(old.Uid) != os.Geteuid() || int(old.Gid) != os.Getegid() {
			_ = unix.Fchown(fd, int(old.Uid), int(old.Gid))
		}
	}
	if err := unix.Fchmod(fd, mode); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// syncDir makes a rename in dirfd (an O_PATH descriptor) durable.
func syncDir(dirfd int) error {
	fd, err := unix.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fsync(fd)
}
