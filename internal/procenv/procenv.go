// Package procenv takes a secret out of the process's environment once it has been read:
// out of what the process and its children see (os.Unsetenv), and out of the copy the
// kernel shows in /proc/<pid>/environ, which is the memory the environment was handed over
// in at exec and which unsetenv never touches. Whoever may read that file (the same account,
// root, a debugger) then finds the entry's name followed by nothing.
package procenv

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Forget removes name from the environment and blanks its value in /proc/self/environ. It
// reports whether the variable was set. An error means the kernel's copy could not be
// blanked (not Linux, or /proc/self/mem refused the write); the variable is gone from the
// environment all the same.
func Forget(name string) (bool, error) {
	_, set := os.LookupEnv(name)
	os.Unsetenv(name)
	if !set {
		return false, nil
	}
	return true, blank(name)
}

// blank overwrites the value of every name= entry in the process's initial environment
// block with NUL bytes, through /proc/self/mem.
func blank(name string) error {
	start, end, err := envBounds()
	if err != nil {
		return err
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("blank %s in /proc/self/environ: %w", name, err)
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, int64(start)); err != nil {
		return fmt.Errorf("blank %s in /proc/self/environ: read: %w", name, err)
	}
	prefix := []byte(name + "=")
	off := 0
	for _, entry := range bytes.Split(block, []byte{0}) {
		if bytes.HasPrefix(entry, prefix) {
			value := off + len(prefix)
			zeros := make([]byte, len(entry)-len(prefix))
			if _, err := mem.WriteAt(zeros, int64(start)+int64(value)); err != nil {
				return fmt.Errorf("blank %s in /proc/self/environ: write: %w", name, err)
			}
		}
		off += len(entry) + 1
	}
	return nil
}

// envBounds reads where the initial environment block lies, from /proc/self/stat (fields 50
// and 51, env_start and env_end).
func envBounds() (start, end uint64, err error) {
	raw, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("read /proc/self/stat: %w", err)
	}
	// The command name (field 2) may hold spaces: count fields from after its ')'.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("read /proc/self/stat: no command name")
	}
	fields := strings.Fields(string(raw[i+1:])) // fields[0] is field 3
	if len(fields) < 49 {
		return 0, 0, fmt.Errorf("read /proc/self/stat: %d fields, want 51", len(fields)+2)
	}
	if start, err = strconv.ParseUint(fields[47], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("read /proc/self/stat: env_start: %w", err)
	}
	if end, err = strconv.ParseUint(fields[48], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("read /proc/self/stat: env_end: %w", err)
	}
	if end <= start || end-start > 64<<20 {
		return 0, 0, fmt.Errorf("read /proc/self/stat: an environment block of %d bytes", end-start)
	}
	return start, end, nil
}
