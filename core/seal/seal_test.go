package seal_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"buddi/core/seal"
)

func testKey(t *testing.T, b byte) seal.Key {
	t.Helper()
	k, err := seal.New(bytes.Repeat([]byte{b}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealBindsKeyPurposeAndFields(t *testing.T) {
	t.Parallel()
	k, other := testKey(t, 1), testKey(t, 2)
	sum := k.Seal("decision", "a", "bc")
	if !k.Check(sum, "decision", "a", "bc") {
		t.Fatal("a seal does not check under its own key")
	}
	tests := []struct {
		name    string
		key     seal.Key
		purpose string
		fields  []string
	}{
		{"another key", other, "decision", []string{"a", "bc"}},
		{"another purpose", k, "action", []string{"a", "bc"}},
		{"fields moved across the boundary", k, "decision", []string{"ab", "c"}},
		{"a field added", k, "decision", []string{"a", "bc", ""}},
		{"a field dropped", k, "decision", []string{"a"}},
		{"the zero key", seal.Key{}, "decision", []string{"a", "bc"}},
	}
	for _, tt := range tests {
		if tt.key.Check(sum, tt.purpose, tt.fields...) {
			t.Errorf("%s: the seal still checks", tt.name)
		}
	}
	if k.Check("", "decision", "a", "bc") {
		t.Error("an empty seal checks")
	}
}

func TestNewRefusesShortKey(t *testing.T) {
	t.Parallel()
	if _, err := seal.New(make([]byte, 16)); err == nil {
		t.Fatal("a 16-byte key was taken")
	}
}

// Load creates the key once, 0600, and every later Load (and concurrent first Loads) agree.
func TestLoadCreatesOnceAndAgrees(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var wg sync.WaitGroup
	sums := make([]string, 8)
	for i := range sums {
		wg.Go(func() {
			k, err := seal.Load(home)
			if err != nil {
				t.Error(err)
				return
			}
			sums[i] = k.Seal("p", "x")
		})
	}
	wg.Wait()
	for _, s := range sums[1:] {
		if s != sums[0] {
			t.Fatalf("concurrent first loads disagree: %v", sums)
		}
	}
	fi, err := os.Stat(filepath.Join(home, seal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
}

// A key file that others can read, that is a link, or that is damaged is refused with a
// sentence saying what to do, never used.
func TestLoadRefusesUnsafeKeyFile(t *testing.T) {
	t.Parallel()
	t.Run("readable by others", func(t *testing.T) {
		home := t.TempDir()
		if _, err := seal.Load(home); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(home, seal.FileName)
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := seal.Load(home); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Fatalf("err = %v, want the chmod advice", err)
		}
	})
	t.Run("a link", func(t *testing.T) {
		home, elsewhere := t.TempDir(), t.TempDir()
		if _, err := seal.Load(elsewhere); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(elsewhere, seal.FileName), filepath.Join(home, seal.FileName)); err != nil {
			t.Fatal(err)
		}
		if _, err := seal.Load(home); err == nil || !strings.Contains(err.Error(), "link") {
			t.Fatalf("err = %v, want a link refused", err)
		}
	})
	t.Run("damaged", func(t *testing.T) {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, seal.FileName), []byte("c2hvcnQ=\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := seal.Load(home); err == nil || !strings.Contains(err.Error(), "damaged") {
			t.Fatalf("err = %v, want damaged", err)
		}
	})
}

func TestWhySaysWhyARowIsRefused(t *testing.T) {
	t.Parallel()
	k := testKey(t, 3)
	sum := k.Seal("row", "1", "a")
	if why := k.Why(sum, "row", "1", "a"); why != "" {
		t.Errorf("a good seal: %q", why)
	}
	if why := k.Why("", "row", "1", "a"); why != seal.WhyNoSeal {
		t.Errorf("no seal: %q", why)
	}
	if why := k.Why(sum, "row", "2", "a"); why != seal.WhyBadSeal {
		t.Errorf("a seal of another row: %q", why)
	}
	if why := (seal.Key{}).Why(sum, "row", "1", "a"); why != seal.WhyBadSeal {
		t.Errorf("no key: %q", why)
	}
}

func TestStampIsUTCMicroseconds(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	if got, want := seal.Stamp(at), "2026-03-01T11:00:00.123456Z"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestRefusalsReportOnce(t *testing.T) {
	t.Parallel()
	var r seal.Refusals
	if !r.First("a") || r.First("a") || !r.First("b") {
		t.Error("First does not report each refusal once")
	}
}

// Renew replaces the secret whole, 0600, and a later read sees the new one.
func TestRenewReplaces(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cli.token")
	first, err := seal.ReadOrCreate(path, 32)
	if err != nil {
		t.Fatal(err)
	}
	second, err := seal.Renew(path, 32)
	if err != nil {
		t.Fatal(err)
	}
	again, err := seal.ReadSecret(path)
	if err != nil || !bytes.Equal(again, second) || bytes.Equal(first, second) {
		t.Fatalf("after Renew the file holds %x (%v); renewed %x, first %x", again, err, second, first)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}
