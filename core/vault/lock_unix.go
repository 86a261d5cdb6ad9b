//go:build unix

package vault

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on path (created 0600 if missing) and returns its
// release. flock locks belong to the open file, so two vaults in one process exclude each
// other as two processes do.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(fd, syscall.LOCK_UN)
		f.Close()
	}, nil
}
