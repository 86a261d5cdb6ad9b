//go:build unix

package health

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// DiskAt measures the file system that holds path: the bytes an unprivileged writer may
// still use (what is reserved for root is not counted) and its size.
func DiskAt(path string) (*Disk, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return nil, fmt.Errorf("measure the disk of %s: %w", path, err)
	}
	bsize := uint64(st.Bsize) //nolint:gosec // a block size is positive
	return JudgeDisk(path, uint64(st.Bavail)*bsize, uint64(st.Blocks)*bsize), nil
}
