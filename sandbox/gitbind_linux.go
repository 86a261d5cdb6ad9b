package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// guardGit mounts read-only, in the box, every place git would take for a repository that
// the workspace held when the launch was made: its own .git (unless the box writes it; made
// empty when missing, so no repository can be made there), each nested .git directory,
// file or link and each bare repository the scan found, and the git directory a .git file
// or link leads to when it lies in a place the box may write. An entry gone or replaced by
// a link since the scan is left alone: it is no longer the one found, and the box's end
// quarantines whatever stands there then.
func (b *box) guardGit() error {
	// The workspace as the box sees it: the writable mount just made on top of it.
	top, err := unix.Open(b.workspace, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open the workspace %s in the box: %w", b.workspace, err)
	}
	defer unix.Close(top)
	if !b.l.Policy.GitWritable {
		if err := unix.Mkdirat(top, ".git", 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("make room to keep %s/.git read-only: %w", b.workspace, err)
		}
		if err := b.readOnlyGit(top, ".git"); err != nil {
			return err
		}
	}
	for _, e := range b.l.Git {
		if err := b.readOnlyGit(top, e.Rel); err != nil {
			return err
		}
	}
	return nil
}

// readOnlyGit mounts the git place at rel (beneath the workspace open at top, with no link on
// the way) read-only, and what a .git file or link leads to.
func (b *box) readOnlyGit(top int, rel string) error {
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}
	fd, err := unix.Openat2(top, rel, how)
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.EXDEV):
		return nil
	case err != nil:
		return fmt.Errorf("open %s in the workspace: %w", rel, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("look at %s in the workspace: %w", rel, err)
	}
	path := filepath.Join(b.workspace, rel)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return mountReadOnly(fd, path)
	case unix.S_IFREG:
		if err := mountReadOnly(fd, path); err != nil {
			return err
		}
		gitdir, ok := readGitfile(fd)
		if !ok {
			return nil
		}
		if !filepath.IsAbs(gitdir) {
			gitdir = filepath.Join(filepath.Dir(path), gitdir)
		}
		return b.readOnlyTarget(gitdir, path)
	case unix.S_IFLNK:
		return b.readOnlyTarget(path, path)
	}
	return nil
}

// readOnlyTarget mounts read-only the git directory target (following links, as git does),
// when it lies in a place the box may write, and the common directory it names (a linked
// worktree's), the same way. from is the entry that leads there, for errors.
func (b *box) readOnlyTarget(target, from string) error {
	for range 2 {
		fd, err := unix.Open(target, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil // leads nowhere: git finds no repository there either
		}
		real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		if err != nil || !b.writable(real) {
			_ = unix.Close(fd)
			return nil
		}
		err = mountReadOnly(fd, real)
		if err == nil {
			target = ""
			if cfd, cerr := unix.Openat(fd, "commondir", unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); cerr == nil {
				common := make([]byte, 4096)
				n, _ := unix.Read(cfd, common)
				_ = unix.Close(cfd)
				if c := strings.TrimSpace(string(common[:max(n, 0)])); c != "" {
					target = c
					if !filepath.IsAbs(c) {
						target = filepath.Join(real, c)
					}
				}
			}
		}
		_ = unix.Close(fd)
		if err != nil {
			return fmt.Errorf("keep the git directory %s (from %s) read-only: %w", real, from, err)
		}
		if target == "" {
			return nil
		}
	}
	return nil
}

// writable reports whether real lies in a place the box may write: the workspace or a
// Writable path.
func (b *box) writable(real string) bool {
	for _, k := range b.kept {
		if k.writable && within(real, k.real) {
			return true
		}
	}
	return false
}

// readGitfile reads the git directory a .git file names ("gitdir: <path>").
func readGitfile(fd int) (string, bool) {
	f, err := os.Open("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return "", false
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, _ := f.Read(buf)
	line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "gitdir:")
	dir = strings.TrimSpace(dir)
	return dir, ok && dir != ""
}

// mountReadOnly mounts, over the file or directory fd names, a read-only copy of itself (and
// of the mounts under it): a detached clone made read-only and then moved onto fd's own
// place, so that no name is looked up again between the check and the mount.
func mountReadOnly(fd int, path string) error {
	tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("keep %s read-only: clone it: %w", path, err)
	}
	defer unix.Close(tree)
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
		return fmt.Errorf("keep %s read-only: %w", path, err)
	}
	if err := unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("keep %s read-only: mount it: %w", path, err)
	}
	return nil
}
