package vault

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// versions returns v's version, failing the test on an error.
func version(t *testing.T, v Vault) string {
	t.Helper()
	s, err := v.Version()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every write through another value of the vault (as another process would make it) gives
// a new version, also two writes of values of the same length within one second on a file
// system that keeps whole seconds.
func TestVersionFile(t *testing.T) {
	t.Parallel()
	b := setup(t)
	reader, writer := b.open(t, b.key), b.open(t, b.key)
	seen := map[string]bool{version(t, reader): true}
	for i := range 6 {
		mustSet(t, writer, "API_KEY", "sk-live-000000000"+string(rune('0'+i)))
		if i%2 == 1 {
			// What a file system with one-second times leaves: the same time as before.
			sec := time.Now().Truncate(time.Second)
			if err := os.Chtimes(b.path, sec, sec); err != nil {
				t.Fatal(err)
			}
		}
		got := version(t, reader)
		if seen[got] {
			t.Fatalf("write %d left the version at %q, seen before", i, got)
		}
		seen[got] = true
		if again := version(t, reader); again != got {
			t.Fatalf("no write, yet the version went from %q to %q", got, again)
		}
	}
	// A file written long ago is told by its identity, size and time alone.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(b.path, old, old); err != nil {
		t.Fatal(err)
	}
	before := version(t, reader)
	mustSet(t, writer, "API_KEY", "sk-live-0000000009")
	if version(t, reader) == before {
		t.Fatal("a write after a quiet hour left the version as it was")
	}
	// The same file rewritten in place, to the same size, within one second: only the
	// contents tell.
	same := filepath.Join(b.dir, "same")
	sec := time.Now().Truncate(time.Second)
	var last string
	for _, content := range []string{"nonce-aaaa", "nonce-bbbb"} {
		if err := os.WriteFile(same, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(same, sec, sec); err != nil {
			t.Fatal(err)
		}
		got, err := fileVersion(same)
		if err != nil {
			t.Fatal(err)
		}
		if got == last {
			t.Fatalf("a rewrite in place within one second left the version at %q", got)
		}
		last = got
	}
	if got := version(t, &fileVault{path: filepath.Join(b.dir, "none.json")}); got != "absent" {
		t.Errorf("a missing file's version is %q", got)
	}
}

// The keychain vault's writes, through any value of it, change its version.
func TestVersionKeychain(t *testing.T) {
	t.Parallel()
	kc := newFakeKeychain()
	path := filepath.Join(t.TempDir(), "vault.json")
	open := func() Vault {
		v, err := Open(Options{Backend: BackendKeychain, Path: path, Keychain: kc})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	reader, writer := open(), open()
	before := version(t, reader)
	mustSet(t, writer, "BOT_TOKEN", "123456:abcdef")
	afterSet := version(t, reader)
	if afterSet == before {
		t.Fatal("Set left the keychain vault's version as it was")
	}
	if err := writer.Delete("BOT_TOKEN"); err != nil {
		t.Fatal(err)
	}
	if version(t, reader) == afterSet {
		t.Fatal("Delete left the keychain vault's version as it was")
	}
}

func TestVersionMemory(t *testing.T) {
	t.Parallel()
	m := NewMemory(nil)
	v0 := version(t, m)
	mustSet(t, m, "A_KEY", "value-1")
	if version(t, m) == v0 {
		t.Fatal("Set left the memory vault's version as it was")
	}
}
