// Package securefile publishes a secret file whole: written to a file of its own beside the
// name, synced, and linked into place, so no reader (another buddi starting at the same
// moment) ever sees the name before it holds the whole secret, and a crash leaves no
// half-written file under it. Where the file system has no hard links (some shared folders
// and FUSE mounts), it creates the name exclusively and writes it instead, as before.
package securefile

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Create makes path hold data, mode 0600, unless path exists: then the error matches
// os.ErrExist and path is left as it is. It never replaces a file.
func Create(path string, data []byte) error {
	tmp, err := Temp(path, data)
	if err != nil {
		return err
	}
	err = os.Link(tmp, path)
	os.Remove(tmp)
	switch {
	case err == nil || errors.Is(err, os.ErrExist):
		return err
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.ENOSYS),
		errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.EXDEV), errors.Is(err, syscall.EMLINK):
		return createInPlace(path, data) // no hard links here
	}
	return err
}

// Temp writes data to a new file beside path (mode 0600, a random suffix, ".new"), synced,
// and returns its name. The caller renames or links it into place and removes it.
func Temp(path string, data []byte) (string, error) {
	var suffix [8]byte
	_, _ = rand.Read(suffix[:])
	tmp := fmt.Sprintf("%s.%x.new", path, suffix)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", err
	}
	if err := finish(f, data); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// finish makes f mode 0600 (the umask may have taken bits), writes data to it, syncs and
// closes it.
func finish(f *os.File, data []byte) error {
	err := f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// createInPlace creates path exclusively and writes data into it; a failed write takes the
// file away again.
func createInPlace(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if err := finish(f, data); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}
