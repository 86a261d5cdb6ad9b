package datadir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrepareCreatesPrivateDirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "home")
	if err := PrepareHome(dir); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("mode = %v, want 0700", fi.Mode().Perm())
	}
}

func TestPrepareNamesUnwritableDirectory(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []string{filepath.Join(file, "home"), file}
	if os.Geteuid() != 0 { // root ignores permission bits
		ro := filepath.Join(base, "ro")
		if err := os.Mkdir(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, ro, filepath.Join(ro, "home"))
	}
	for _, dir := range cases {
		err := PrepareHome(dir)
		if err == nil {
			t.Errorf("PrepareHome(%s) succeeded", dir)
			continue
		}
		if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "BUDDI_HOME") {
			t.Errorf("PrepareHome(%s) = %q: want the directory named and BUDDI_HOME advised", dir, err)
		}
	}
}

func TestLockIsExclusive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := TryLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = TryLock(dir)
	var le *LockedError
	if !errors.As(err, &le) || le.Pid != os.Getpid() {
		t.Fatalf("second lock: err = %v, want LockedError naming pid %d", err, os.Getpid())
	}
	first.Release()
	again, err := TryLock(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again.Release()
}
