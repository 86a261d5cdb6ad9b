package datadir

import (
	"fmt"
	"os"
	"path/filepath"
)

// PrepareHome creates the data directory with mode 0700 when it is missing and proves it is
// writable, so a bad BUDDI_HOME fails at once with its name rather than later and vaguely.
func PrepareHome(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("data directory %s cannot be created (%v): set BUDDI_HOME to a directory you can write", dir, rootCause(err))
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data directory %s cannot be read (%v): set BUDDI_HOME to a directory you can write", dir, rootCause(err))
	}
	if !fi.IsDir() {
		return fmt.Errorf("data directory %s is not a directory: set BUDDI_HOME to a directory you can write", dir)
	}
	probe, err := os.CreateTemp(dir, ".write-probe-*")
	if err != nil {
		return fmt.Errorf("data directory %s is not writable (%v): set BUDDI_HOME to a directory you can write", dir, rootCause(err))
	}
	name := probe.Name()
	probe.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("data directory %s: remove write probe %s: %w", dir, filepath.Base(name), err)
	}
	return nil
}

func rootCause(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
