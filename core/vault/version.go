package vault

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// racyWindow is how long after a file was written another write may leave its size and
// modification time as they were: file systems keep the time in nanoseconds, whole seconds
// or (FAT) two seconds. Within it the version also covers the file's contents.
const racyWindow = 3 * time.Second

// fileVersion returns a token for the file at path that is different after every write of
// it, read cheaply: its identity, size and modification time, and, while it was written
// less than racyWindow ago, a digest of its contents (each write of a vault file seals it
// with a fresh nonce, so two writes never leave the same bytes). A missing file is "absent".
func fileVersion(path string) (string, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "absent", nil
	}
	if err != nil {
		return "", fmt.Errorf("vault: look at %s: %w", path, err)
	}
	token := fmt.Sprintf("%s:%d:%d", fileIdentity(fi), fi.Size(), fi.ModTime().UnixNano())
	if age := time.Since(fi.ModTime()); age < racyWindow && age > -racyWindow {
		data, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("vault: read %s: %w", path, err)
		}
		sum := sha256.Sum256(data)
		token += ":" + hex.EncodeToString(sum[:16])
	}
	return token, nil
}
