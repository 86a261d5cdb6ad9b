package securefile

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Concurrent creators agree on one file, whole, 0600; the rest are told it exists; nothing
// is left beside it.
func TestConcurrentCreatesLeaveOneWholeFile(t *testing.T) {
	for round := range 30 {
		dir := t.TempDir()
		path := filepath.Join(dir, "secret")
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := range 8 {
			wg.Go(func() {
				err := Create(path, []byte{byte('a' + i), '\n'})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case !errors.Is(err, os.ErrExist):
					t.Errorf("round %d: %v", round, err)
				}
				// Whoever reads now sees a whole file.
				if b, err := os.ReadFile(path); err == nil && len(b) != 2 {
					t.Errorf("round %d: read %q", round, b)
				}
			})
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("round %d: %d creators won", round, won)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("round %d: %v %v", round, fi, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("round %d: %d files in the directory, want the secret alone", round, len(entries))
		}
	}
}

// Without hard links, the file is created in place, and an existing one is still never
// replaced.
func TestCreateInPlaceNeverReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret")
	if err := createInPlace(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := createInPlace(path, []byte("two")); !errors.Is(err, os.ErrExist) {
		t.Fatalf("second create: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Fatalf("file holds %q", b)
	}
}
