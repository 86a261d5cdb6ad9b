package vault

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	envKey  = "aGVsbG8taGVsbG8taGVsbG8taGVsbG8taGVsbG8tISE="
	chainK  = "Y2hhaW4tY2hhaW4tY2hhaW4tY2hhaW4tY2hhaW4tISE="
	fileKey = "ZmlsZS1maWxlLWZpbGUtZmlsZS1maWxlLWZpbGUtISE="
)

// writeKey writes a key file with mode perm (chmod after the write, so the umask does not
// decide).
func writeKey(t *testing.T, path, value string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

// The order is BUDDI_VAULT_KEY, then the keychain's entry, then the key file; a keychain
// that does not answer is passed over (and said), BUDDI_KEYCHAIN=off never asks it.
func TestResolveKeyOrder(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "buddi", "vault.key")
	writeKey(t, file, fileKey, 0o600)
	full := newFakeKeychain()
	if err := full.Set(DefaultService, KeyUser, chainK); err != nil {
		t.Fatal(err)
	}
	broken := newFakeKeychain()
	broken.fail = errors.New("no D-Bus session")
	for _, tt := range []struct {
		name   string
		o      KeyOptions
		value  string
		source KeySource
		note   string
	}{
		{"env wins over all", KeyOptions{Env: envKey, Keychain: full, File: file}, envKey, KeyFromEnv, ""},
		{"keychain before file", KeyOptions{Keychain: full, File: file}, chainK, KeyFromKeychain, ""},
		{"empty keychain: file", KeyOptions{Keychain: newFakeKeychain(), File: file}, fileKey, KeyFromFile, ""},
		{"broken keychain: file", KeyOptions{Keychain: broken, File: file}, fileKey, KeyFromFile, "no D-Bus session"},
		{"keychain off: file", KeyOptions{Keychain: full, NoKeychain: true, File: file}, fileKey, KeyFromFile, "BUDDI_KEYCHAIN=off"},
		{"nothing", KeyOptions{Keychain: newFakeKeychain(), File: filepath.Join(t.TempDir(), "none")}, "", KeyNowhere, ""},
		{"no config dir", KeyOptions{Keychain: newFakeKeychain()}, "", KeyNowhere, ""},
	} {
		k, err := ResolveKey(tt.o)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if strings.TrimSpace(k.Value) != tt.value || k.Source != tt.source || !strings.Contains(k.Keychain, tt.note) || (tt.note == "") != (k.Keychain == "") {
			t.Errorf("%s: got %q from %q (keychain: %q), want %q from %q", tt.name, k.Value, k.Source, k.Keychain, tt.value, tt.source)
		}
	}
}

// A key file others could read or write is refused with the chmod that fixes it, never used,
// and the vault opened through it is locked saying so.
func TestResolveKeyRefusesOpenKeyFile(t *testing.T) {
	t.Parallel()
	for _, perm := range []os.FileMode{0o644, 0o640, 0o604, 0o660, 0o620, 0o602, 0o700 | 0o004} {
		file := filepath.Join(t.TempDir(), "vault.key")
		writeKey(t, file, fileKey, perm)
		k, err := ResolveKey(KeyOptions{Keychain: newFakeKeychain(), File: file})
		wantLocked(t, err, "chmod 600 "+file)
		if k.Value != "" {
			t.Errorf("mode %04o: the key was returned", perm)
		}
		v, _, err := OpenWithKey(filepath.Join(t.TempDir(), "vault.json"), KeyOptions{Keychain: newFakeKeychain(), File: file})
		if err != nil {
			t.Fatal(err)
		}
		wantAllLocked(t, v, "chmod 600 "+file)
	}
	// Not a regular file, empty: refused too, saying what to do.
	dir := filepath.Join(t.TempDir(), "vault.key")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := ResolveKey(KeyOptions{Keychain: newFakeKeychain(), File: dir})
	wantLocked(t, err, "not a regular file")
	empty := filepath.Join(t.TempDir(), "vault.key")
	writeKey(t, empty, "", 0o600)
	_, err = ResolveKey(KeyOptions{Keychain: newFakeKeychain(), File: empty})
	wantLocked(t, err, "is empty")
}

// A key file of another user's is refused (run as root, the test makes one).
func TestResolveKeyRefusesOthersKeyFile(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("making a file of another user's needs root")
	}
	file := filepath.Join(t.TempDir(), "vault.key")
	writeKey(t, file, fileKey, 0o600)
	if err := os.Chown(file, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	_, err := ResolveKey(KeyOptions{Keychain: newFakeKeychain(), File: file})
	wantLocked(t, err, "belongs to another user", "chown")
}

// CreateKey keeps the key in the keychain when it answers, else in a 0600 key file; it never
// replaces a key file; and the vault sealed with the key it made opens with the key
// ResolveKey finds afterwards.
func TestCreateKey(t *testing.T) {
	t.Parallel()
	t.Run("Keychain", func(t *testing.T) {
		t.Parallel()
		kc := newFakeKeychain()
		o := KeyOptions{Keychain: kc, File: filepath.Join(t.TempDir(), "buddi", "vault.key")}
		k, err := CreateKey(o)
		if err != nil || k.Source != KeyFromKeychain {
			t.Fatalf("CreateKey = %+v, %v", k, err)
		}
		if _, err := os.Stat(o.File); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a key file was written beside the keychain's: %v", err)
		}
		roundTrip(t, o)
	})
	t.Run("File", func(t *testing.T) {
		t.Parallel()
		broken := newFakeKeychain()
		broken.fail = errors.New("no D-Bus session")
		o := KeyOptions{Keychain: broken, File: filepath.Join(t.TempDir(), "cfg", "buddi", "vault.key")}
		k, err := CreateKey(o)
		if err != nil || k.Source != KeyFromFile || k.Where != o.File || !strings.Contains(k.Keychain, "no D-Bus session") {
			t.Fatalf("CreateKey = %+v, %v", k, err)
		}
		fi, err := os.Stat(o.File)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("key file: %v, %v; want mode 0600", fi, err)
		}
		if di, err := os.Stat(filepath.Dir(o.File)); err != nil || di.Mode().Perm() != 0o700 {
			t.Errorf("key file's directory: %v, %v; want mode 0700", di, err)
		}
		roundTrip(t, o)
		if _, err := CreateKey(o); err == nil || !strings.Contains(err.Error(), "never replaces") {
			t.Errorf("a second CreateKey: %v, want a refusal", err)
		}
	})
	t.Run("Off", func(t *testing.T) {
		t.Parallel()
		kc := newFakeKeychain()
		o := KeyOptions{Keychain: kc, NoKeychain: true, File: filepath.Join(t.TempDir(), "vault.key")}
		if k, err := CreateKey(o); err != nil || k.Source != KeyFromFile {
			t.Fatalf("CreateKey = %+v, %v", k, err)
		}
		if len(kc.entries) != 0 {
			t.Errorf("BUDDI_KEYCHAIN=off, and the keychain was written: %v", kc.entries)
		}
	})
}

// roundTrip seals a secret in a new vault through OpenWithKey and reads it back through a
// second OpenWithKey, as a second process would.
func roundTrip(t *testing.T, o KeyOptions) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vault.json")
	v, k, err := OpenWithKey(path, o)
	if err != nil || k.Source == KeyNowhere {
		t.Fatalf("OpenWithKey = %v, %+v", err, k)
	}
	if !strings.HasPrefix(v.String(), "file vault") {
		t.Fatalf("the key's vault is %s, want the file vault", v)
	}
	mustSet(t, v, "API_KEY", "sk-live-0123456789")
	again, _, err := OpenWithKey(path, o)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := again.Get("API_KEY"); err != nil || got != "sk-live-0123456789" {
		t.Errorf("Get = %q, %v", got, err)
	}
}

// Without a key anywhere the vault is locked and says to run buddi init; with a vault file
// and no key, it says to set the key it was sealed with. A wrong key from the key file is
// called by where it was found, not BUDDI_VAULT_KEY.
func TestOpenWithKeySentences(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "vault.json")
	o := KeyOptions{NoKeychain: true, File: filepath.Join(dir, "vault.key")}
	v, k, err := OpenWithKey(path, o)
	if err != nil || k.Source != KeyNowhere {
		t.Fatal(err, k)
	}
	wantAllLocked(t, v, "buddi init", o.File, "BUDDI_KEYCHAIN=off")
	sealed, _, err := OpenWithKey(path, KeyOptions{Env: envKey, NoKeychain: true})
	if err != nil {
		t.Fatal(err)
	}
	mustSet(t, sealed, "API_KEY", "sk-live-0123456789")
	v, _, err = OpenWithKey(path, o)
	if err != nil {
		t.Fatal(err)
	}
	wantAllLocked(t, v, "No key opens the vault", "BUDDI_VAULT_KEY to the key it was sealed with")
	writeKey(t, o.File, fileKey, 0o600)
	v, _, err = OpenWithKey(path, o)
	if err != nil {
		t.Fatal(err)
	}
	wantAllLocked(t, v, "the vault key in "+o.File+" does not open the vault")
}

func TestOwnerKeyOptions(t *testing.T) {
	t.Parallel()
	env := map[string]string{"BUDDI_VAULT_KEY": envKey, "BUDDI_KEYCHAIN": "off"}
	o, err := OwnerKeyOptions(func(k string) string { return env[k] })
	if err != nil || o.Env != envKey || !o.NoKeychain {
		t.Errorf("OwnerKeyOptions = %+v, %v", o, err)
	}
	env["BUDDI_KEYCHAIN"] = "sometimes"
	if _, err := OwnerKeyOptions(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "say off") {
		t.Errorf("BUDDI_KEYCHAIN=sometimes: %v", err)
	}
}

// A vault opened before any key exists is locked, saying to run buddi init; once a key is
// made (as buddi init makes it) the same vault opens without being opened again, and what it
// stores is sealed with that key.
func TestVaultOpensOnceTheKeyIsMade(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "vault.json")
	o := KeyOptions{NoKeychain: true, File: filepath.Join(dir, "config", "buddi", "vault.key")}
	v, key, err := OpenWithKey(path, o)
	if err != nil || key.Source != KeyNowhere {
		t.Fatalf("open with no key: %v %+v", err, key)
	}
	err = v.Check()
	wantLocked(t, err, "buddi init")
	if _, err := CreateKey(o); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for v.Check() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the vault is still locked after the key was made: %v", v.Check())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := v.Set("API_KEY", "sk-1"); err != nil {
		t.Fatal(err)
	}
	again, _, err := OpenWithKey(path, o)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := again.Get("API_KEY"); err != nil || got != "sk-1" {
		t.Fatalf("the secret read through the key file: %q %v", got, err)
	}
	if !strings.HasPrefix(v.String(), "file vault ") {
		t.Errorf("String: %q", v.String())
	}
}
