package redact

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"buddi/core/vault"
)

// TestLiveSeesAnotherProcess: `buddi vault set` in another process, while buddi serve
// runs: the next use of the server's Live redacts the new value, with no reload and no
// refresh interval; so does every later set, however quick (values of the same length,
// within one second).
func TestLiveSeesAnotherProcess(t *testing.T) {
	if path := os.Getenv("REDACT_TEST_VAULT"); path != "" { // the other process
		v, err := vault.Open(vault.Options{Backend: vault.BackendFile, Path: path, Key: os.Getenv("REDACT_TEST_KEY")})
		if err == nil {
			err = v.Set(os.Getenv("REDACT_TEST_NAME"), os.Getenv("REDACT_TEST_VALUE"))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	t.Parallel()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	keyText := base64.StdEncoding.EncodeToString(key)
	path := filepath.Join(t.TempDir(), "vault.json")
	v, err := vault.Open(vault.Options{Backend: vault.BackendFile, Path: path, Key: keyText})
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive(v)
	if got := l.String("nothing yet"); got != "nothing yet" {
		t.Fatalf("got %q", got)
	}
	for i := range 4 {
		name, value := fmt.Sprintf("NEW_KEY_%d", i), fmt.Sprintf("sk-set-elsewhere-%04d", i)
		cmd := exec.Command(os.Args[0], "-test.run=^TestLiveSeesAnotherProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "REDACT_TEST_VAULT="+path, "REDACT_TEST_KEY="+keyText,
			"REDACT_TEST_NAME="+name, "REDACT_TEST_VALUE="+value)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("vault set in another process: %v\n%s", err, out)
		}
		if got, want := l.String("the key is "+value), "the key is "+Token(name); got != want {
			t.Fatalf("set %d: the next use redacted %q, want %q", i, got, want)
		}
	}
}

// flaky is a Versioned source whose version cannot always be read.
type flaky struct {
	values  map[string]string
	failing bool
	version int
}

func (f *flaky) Values() (map[string]string, error) { return f.values, nil }
func (f *flaky) Version() (string, error) {
	if f.failing {
		return "", fmt.Errorf("stat: permission denied")
	}
	return fmt.Sprint(f.version), nil
}

// A version that cannot be read loads the values once, and keeps what redacted until now.
func TestLiveVersionUnreadable(t *testing.T) {
	t.Parallel()
	src := &flaky{values: map[string]string{"API_KEY": "sk-live-0123456789"}, failing: true}
	l := NewLive(src)
	if got := l.String("k=sk-live-0123456789"); got != "k=‹secret:API_KEY›" {
		t.Fatalf("first use with no version: %q", got)
	}
	src.failing = false
	src.values = map[string]string{"API_KEY": "sk-live-0123456789", "NEW": "brand-new-value"}
	if got := l.String("brand-new-value"); got != "‹secret:NEW›" {
		t.Fatalf("once the version reads again: %q", got)
	}
	src.failing = true
	if got := l.String("k=sk-live-0123456789 brand-new-value"); got != "k=‹secret:API_KEY› ‹secret:NEW›" {
		t.Fatalf("with the version unreadable again: %q", got)
	}
}
