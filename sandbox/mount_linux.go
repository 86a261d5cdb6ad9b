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
// (nothing here is seen outside it): mounts stop propagating; every mount becomes read-only,
// so that nothing outside the writable places can be written, nor have its mode, owner,
// times or extended attributes changed (which Landlock does not govern); each private
// directory gets an empty writable tmpfs; the workspace and the Writable paths are mounted
// again, writable, from the descriptors prepare holds (and the policy's paths under a
// private directory are mounted back in the same way); .git and the read-only paths are
// mounted read-only; Home and the Hidden paths are covered.
func (b *box) mount() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private (a mount namespace of our own is needed): %w", err)
	}
	if err := setReadOnly("/", true, unix.AT_RECURSIVE); err != nil {
		return fmt.Errorf("make every mount read-only: %w", err)
	}
	for _, d := range privateDirs {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			continue // missing, or a link to a directory handled on its own
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return fmt.Errorf("cover %s with a private tmpfs: %w", d, err)
		}
	}
	// The box's own /proc: the launcher is the first process of a new PID namespace, and a
	// proc mounted here shows that namespace alone, so no other process (buddi, the owner's
	// shells, other boxes) is there to read, even by its command line. Read-only, as the one
	// it covers was made, unless the policy lets the program make namespaces of its own
	// (which needs it to write their id maps there).
	procFlags := uintptr(unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	if b.l.Policy.Namespaces {
		if os.Geteuid() == 0 {
			return errors.New("a box that lets its program make namespaces is refused to root: its uid 0 could write the kernel's settings in /proc/sys")
		}
		procFlags &^= unix.MS_RDONLY
	}
	if err := unix.Mount("proc", "/proc", "proc", procFlags, ""); err != nil {
		return fmt.Errorf("mount the box's own /proc (a PID namespace of our own is needed): %w", err)
	}
	// Shorter first: a path inside another is mounted onto what the outer one brought.
	held := append(append([]heldPath(nil), b.kept...), b.files...)
	slices.SortStableFunc(held, func(x, y heldPath) int { return len(x.real) - len(y.real) })
	for _, k := range held {
		if underPrivate(k.real) != "" {
			if err := mountpoint(k.real, k.dir); err != nil {
				return err
			}
		}
		src := "/proc/self/fd/" + strconv.Itoa(k.fd)
		if err := unix.Mount(src, k.real, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("mount the %s %s into the box: %w", k.role, k.real, err)
		}
		if err := setReadOnly(k.real, !k.writable, 0); err != nil {
			return fmt.Errorf("mount the %s %s into the box: %w", k.role, k.real, err)
		}
	}
	if err := b.guardGit(); err != nil {
		return err
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
	if err := setReadOnly(path, true, 0); err != nil {
		return fmt.Errorf("make %s read-only: %w", path, err)
	}
	return nil
}

// setReadOnly makes the mount at path read-only, or writable, and nothing else about it
// (mount_setattr; flags may be AT_RECURSIVE for the whole tree under it).
func setReadOnly(path string, readOnly bool, flags uint) error {
	attr := unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	if readOnly {
		attr = unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	}
	return unix.MountSetattr(unix.AT_FDCWD, path, flags, &attr)
}
