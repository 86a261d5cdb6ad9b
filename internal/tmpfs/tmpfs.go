//go:build linux

// Package tmpfs gives tests a small file system of their own that they can fill: a real
// full disk, without filling the machine's. Mounting needs root (CAP_SYS_ADMIN); elsewhere
// the test is skipped and says why.
package tmpfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size bytes on a new temporary directory, unmounted when the test
// ends, and returns the directory (mode 0755: other accounts, such as the postgres one that
// an embedded cluster runs as under root, may enter it).
func Mount(t testing.TB, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a test file system needs root to mount; run the tests as root to see a real full disk")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		t.Skipf("mount a test tmpfs on %s: %v (this machine does not allow it)", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount the test tmpfs %s: %v", dir, err)
		}
	})
	return dir
}

// Fill writes a file into dir until no more than leave bytes are free on its file system.
func Fill(t testing.TB, dir string, leave uint64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := st.Bavail * uint64(st.Bsize)
	if free <= leave {
		return
	}
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte{'x'}, 1<<20)
	for want := free - leave; want > 0; {
		n := min(uint64(len(chunk)), want)
		if _, err := f.Write(chunk[:n]); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
		want -= n
	}
}
