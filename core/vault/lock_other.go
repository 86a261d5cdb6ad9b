//go:build !unix

package vault

import "os"

// lockFile creates path and returns a release that does nothing: where flock does not exist,
// writes are serialised within one process only.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}
