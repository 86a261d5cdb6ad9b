//go:build unix

package vault

import (
	"fmt"
	"io/fs"
	"syscall"
)

// fileIdentity names the file itself (device and inode): an atomic rewrite is a new file.
func fileIdentity(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d.%d", st.Dev, st.Ino)
	}
	return ""
}
