package pgcluster

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Under root the cluster's directory belongs to the postgres account, which could put a link
// anywhere inside it. buddi therefore never resolves a path there: it opens Dir itself (whose
// entry sits in buddi's own directory) without following a link, and reaches everything
// below through descriptors, again without following links.

// openDir opens Dir without following a link.
func (c *Cluster) openDir() (*os.File, error) {
	fd, err := unix.Open(c.opts.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the database directory %s: %w (it must be a directory, not a link)", c.opts.Dir, err)
	}
	return os.NewFile(uintptr(fd), c.opts.Dir), nil
}

// openSubdir opens name inside parent, refusing a link or anything but a directory.
func openSubdir(parent *os.File, name string) (*os.File, error) {
	path := filepath.Join(parent.Name(), name)
	fd, err := unix.Openat(int(parent.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return nil, fmt.Errorf("%s is not a directory (a link?): remove it and start buddi again", path)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openDataDir opens PGDATA through Dir.
func (c *Cluster) openDataDir() (*os.File, error) {
	dir, err := c.openDir()
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return openSubdir(dir, "data")
}

// ownDir gives an opened directory mode 0700 and, under root, to the server's account.
func (c *Cluster) ownDir(d *os.File) error {
	if err := d.Chmod(0o700); err != nil {
		return fmt.Errorf("set mode of database directory %s: %w", d.Name(), err)
	}
	if c.runAs != nil {
		if err := d.Chown(int(c.runAs.uid), int(c.runAs.gid)); err != nil {
			return fmt.Errorf("give database directory %s to the %s account: %w", d.Name(), c.runAs.name, err)
		}
	}
	return nil
}

// readDataFile reads a small configuration file in PGDATA.
func (c *Cluster) readDataFile(name string) (string, error) {
	dir, err := c.openDataDir()
	if err != nil {
		return "", err
	}
	defer dir.Close()
	return readIn(dir, name)
}

func readIn(dir *os.File, name string) (string, error) {
	path := filepath.Join(dir.Name(), name)
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file: remove it and start buddi again", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return string(b), nil
}

// writeDataFile replaces a file in PGDATA with content, atomically.
func (c *Cluster) writeDataFile(name, content string) error {
	dir, err := c.openDataDir()
	if err != nil {
		return err
	}
	defer dir.Close()
	return c.writeIn(dir, name, content)
}

// writeIn replaces name in dir with content (mode 0600, the server's account's): written to
// a new file beside it, synced, and renamed over it, so a crash leaves the old file or the
// new one, never half of one.
func (c *Cluster) writeIn(dir *os.File, name, content string) error {
	path := filepath.Join(dir.Name(), name)
	tmp := "." + name + ".buddi-new"
	if err := unix.Unlinkat(int(dir.Fd()), tmp, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("remove the leftover %s: %w", filepath.Join(dir.Name(), tmp), err)
	}
	fd, err := unix.Openat(int(dir.Fd()), tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir.Name(), tmp))
	_, err = f.WriteString(content)
	if err == nil && c.runAs != nil {
		err = f.Chown(int(c.runAs.uid), int(c.runAs.gid))
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(int(dir.Fd()), tmp, int(dir.Fd()), name)
	}
	if err != nil {
		_ = unix.Unlinkat(int(dir.Fd()), tmp, 0)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := dir.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
