//go:build unix

package vault

import (
	"io/fs"
	"os"
	"syscall"
)

// checkKeyFileOwner refuses a key file that belongs to another user: whoever owns it can
// change its mode and read the key.
func checkKeyFileOwner(path string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Getuid(); int(st.Uid) != uid {
		return locked(nil, "The vault key file %s belongs to another user (uid %d, not %d), so buddi does not use it: run `sudo chown %d %s && chmod 600 %s` if it is yours.", path, st.Uid, uid, uid, path, path)
	}
	return nil
}
