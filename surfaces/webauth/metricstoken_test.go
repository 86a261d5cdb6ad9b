package webauth_test

import (
	"os"
	"path/filepath"
	"testing"

	"buddi/surfaces/webauth"
)

// The scrape token is made once (0600) and read back the same at the next start; a token
// file that another account could have planted as a link, or that others may read, is refused.
func TestMetricsToken(t *testing.T) {
	home := t.TempDir()
	first, err := webauth.MetricsToken(home)
	if err != nil || len(first) < 40 {
		t.Fatalf("made: %q %v", first, err)
	}
	if again, err := webauth.MetricsToken(home); err != nil || again != first {
		t.Fatalf("read back: %q %v, want the same token across starts", again, err)
	}
	fi, err := os.Stat(filepath.Join(home, webauth.MetricsTokenFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the file: %v %v", fi.Mode(), err)
	}

	linked := t.TempDir()
	if err := os.Symlink(filepath.Join(home, webauth.MetricsTokenFile), filepath.Join(linked, webauth.MetricsTokenFile)); err != nil {
		t.Fatal(err)
	}
	if tok, err := webauth.MetricsToken(linked); err == nil {
		t.Errorf("a link in place of the token file was followed: %q", tok)
	}

	open := t.TempDir()
	if err := os.WriteFile(filepath.Join(open, webauth.MetricsTokenFile), make([]byte, 32), 0o644); err != nil {
		t.Fatal(err)
	}
	if tok, err := webauth.MetricsToken(open); err == nil {
		t.Errorf("a token file others may read was used: %q", tok)
	}
}
