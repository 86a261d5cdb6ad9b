package spawn

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// helperName is the name the test binary answers to when it plays the spawned program: a
// bare name, found on a PATH that holds helperDir, as Run requires.
const helperName = "spawnhelper"

// helperDir holds a link named helperName to this test binary.
var helperDir string

// TestMain plays the helper program when the binary is started as helperName; otherwise it
// runs the tests and then fails the run when a goroutine was left behind.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == helperName {
		os.Exit(helperMain(os.Args[1:]))
	}
	code, err := runTests(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// runTests links the helper, runs the tests and checks for leaked goroutines.
func runTests(m *testing.M) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 1, err
	}
	dir, err := os.MkdirTemp("", "spawn-helper-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	if err := os.Symlink(exe, filepath.Join(dir, helperName)); err != nil {
		return 1, err
	}
	helperDir = dir
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			return 1, fmt.Errorf("goleak: %w", err)
		}
	}
	return code, nil
}
