package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// mount makes the box's view of the file system, in the launcher's own mount namespace
// (nothing here is seen outside it): mounts stop propagating; each private directory gets an
// empty writable tmpfs, and the policy's paths under one are mounted back in; .git and the
// read-only paths become read-only; Home and the Hidden paths are covered.
func (b *box) mount() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private (a mount namespace of our own is needed): %w", err)
	}
	// Paths under a private directory are mounted back in from the descriptors prepare
	// holds, shorter first: a path inside another is mounted onto what the outer one
	// brought back.
	var backs []heldPath
	for _, k := range append(b.kept, b.files...) {
		if underPrivate(k.real) != "" {
			backs = append(backs, k)
		}
	}
	slices.SortStableFunc(backs, func(x, y heldPath) int { return len(x.real) - len(y.real) })

	for _, d := range privateDirs {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			continue // missing, or a link to a directory handled on its own
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return fmt.Errorf("cover %s with a private tmpfs: %w", d, err)
		}
	}
	for _, k := range backs {
		if err := mountpoint(k.real, k.dir); err != nil {
			return err
		}
		src := "/proc/self/fd/" + strconv.Itoa(k.fd)
		if err := unix.Mount(src, k.real, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("mount %s back into its private directory: %w", k.real, err)
		}
		if !k.writable {
			if err := remountReadOnly(k.real); err != nil {
				return err
			}
		}
	}
	if !b.l.Policy.GitWritable {
		git := filepath.Join(b.workspace, ".git")
		if _, err := os.Lstat(git); err == nil {
			if err := bindReadOnly(git, git); err != nil {
				return err
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("look at %s: %w", git, err)
		}
	}
	for _, k := range b.kept {
		if !k.writable && underPrivate(k.real) == "" {
			if err := bindReadOnly("/proc/self/fd/"+strconv.Itoa(k.fd), k.real); err != nil {
				return err
			}
		}
	}
	for _, h := range b.covers {
		fi, err := os.Stat(h.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // under a private directory, or not there at all
		}
		if err != nil {
			return fmt.Errorf("look at the %s %s: %w", h.role, h.path, err)
		}
		if err := cover(h.path, fi.IsDir()); err != nil {
			return fmt.Errorf("cover the %s %s: %w", h.role, h.path, err)
		}
	}
	return nil
}

// cover hides what is at path: a directory under an empty read-only tmpfs, a file under a
// read-only bind of /dev/null (it reads as empty).
func cover(path string, dir bool) error {
	if dir {
		return unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0555,size=4k,nr_inodes=1")
	}
	return bindReadOnly("/dev/null", path)
}

// mountpoint makes sure target exists in the new view (a directory, or an empty file for
// dir false), creating it and its parents inside the private tmpfs when missing.
func mountpoint(target string, dir bool) error {
	if _, err := os.Lstat(target); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return fmt.Errorf("make room for %s: %w", target, err)
	}
	if dir {
		if err := os.Mkdir(target, 0o755); err != nil {
			return fmt.Errorf("make room for %s: %w", target, err)
		}
		return nil
	}
	fd, err := unix.Open(target, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o444)
	if err != nil {
		return fmt.Errorf("make room for %s: %w", target, err)
	}
	return unix.Close(fd)
}

// bindReadOnly mounts src (a path, or the descriptor of one) onto path, then makes that
// mount read-only. Whatever a link at path leads to when it is mounted becomes read-only
// in the box, which takes nothing from anybody.
func bindReadOnly(src, path string) error {
	if err := unix.Mount(src, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s read-only: %w", path, err)
	}
	return remountReadOnly(path)
}

// remountReadOnly makes the bind mount at path read-only, keeping the flags it already has
// (in a user namespace the inherited nosuid, nodev and noexec are locked and must be kept).
func remountReadOnly(path string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return fmt.Errorf("read the mount flags of %s: %w", path, err)
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for _, f := range []struct{ st, ms int64 }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if st.Flags&f.st != 0 {
			flags |= uintptr(f.ms)
		}
	}
	if err := unix.Mount("", path, "", flags, ""); err != nil {
		return fmt.Errorf("make %s read-only: %w", path, err)
	}
	return nil
}
