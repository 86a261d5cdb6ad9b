//go:build !unix

package health

import "errors"

// DiskAt is not measured on this system.
func DiskAt(path string) (*Disk, error) {
	return nil, errors.New("the free disk space is not measured on this system")
}
