package vault

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// testKey returns a fresh random key in the recommended form.
func testKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// cheapArgon keeps passphrase tests fast; the cost is stored in the file, so reopening reads
// it from there.
var cheapArgon = &argonParams{Time: 1, MemoryKiB: 64, Threads: 1}

type testBundle struct {
	dir  string
	path string
	key  string
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	dir := t.TempDir()
	return &testBundle{dir: dir, path: filepath.Join(dir, "vault.json"), key: testKey(t)}
}

func (b *testBundle) open(t *testing.T, key string) Vault {
	t.Helper()
	v, err := Open(Options{Backend: BackendFile, Path: b.path, Key: key, argon: cheapArgon})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustSet(t *testing.T, v Vault, name, value string) {
	t.Helper()
	if err := v.Set(name, value); err != nil {
		t.Fatalf("Set(%s): %v", name, err)
	}
}

// wantLocked checks that err is a *LockedError whose reason mentions each of words.
func wantLocked(t *testing.T, err error, words ...string) {
	t.Helper()
	var le *LockedError
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) {
		t.Fatalf("got %v, want a *LockedError", err)
	}
	for _, w := range words {
		if !strings.Contains(le.Reason, w) {
			t.Errorf("reason %q does not say %q", le.Reason, w)
		}
	}
}

// wantAllLocked checks that every method of v fails closed.
func wantAllLocked(t *testing.T, v Vault, words ...string) {
	t.Helper()
	value, err := v.Get("API_KEY")
	if value != "" {
		t.Errorf("Get returned %q from a locked vault", value)
	}
	wantLocked(t, err, words...)
	present, err := v.Present("API_KEY")
	if present {
		t.Error("Present says true on a locked vault")
	}
	wantLocked(t, err, words...)
	names, err := v.List()
	if names != nil {
		t.Errorf("List returned %v from a locked vault", names)
	}
	wantLocked(t, err, words...)
	values, err := v.Values()
	if values != nil {
		t.Errorf("Values returned %v from a locked vault", values)
	}
	wantLocked(t, err, words...)
	wantLocked(t, v.Check(), words...)
	wantLocked(t, v.Set("OTHER", "value-123456"), words...)
	wantLocked(t, v.Delete("API_KEY"), words...)
}

func TestFileVault(t *testing.T) {
	t.Parallel()

	t.Run("ConcurrentSet", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		v1, v2 := b.open(t, b.key), b.open(t, b.key) // two values: the flock, not the mutex, serialises them
		var wg sync.WaitGroup
		for i := range 24 {
			v := v1
			if i%2 == 1 {
				v = v2
			}
			wg.Go(func() {
				if err := v.Set(fmt.Sprintf("S_%02d", i), fmt.Sprintf("value-%02d-secret", i)); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		got, err := v1.Values()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 24 {
			t.Fatalf("got %d secrets after 24 concurrent sets, want 24: %v", len(got), slices.Sorted(maps.Keys(got)))
		}
		for i := range 24 {
			if got[fmt.Sprintf("S_%02d", i)] != fmt.Sprintf("value-%02d-secret", i) {
				t.Errorf("S_%02d = %q", i, got[fmt.Sprintf("S_%02d", i)])
			}
		}
	})

	t.Run("DamagedFile", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		mustSet(t, b.open(t, b.key), "API_KEY", "sk-live-0123456789")
		good, err := os.ReadFile(b.path)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(good, &doc); err != nil {
			t.Fatal(err)
		}
		edit := func(field string, change func(any) any) []byte {
			d := map[string]any{}
			for k, v := range doc {
				d[k] = v
			}
			d[field] = change(d[field])
			out, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		flip := func(v any) any { // flip one bit of a base64 field
			raw, _ := base64.StdEncoding.DecodeString(v.(string))
			raw[len(raw)/2] ^= 1
			return base64.StdEncoding.EncodeToString(raw)
		}
		tests := []struct {
			name  string
			data  []byte
			words []string
		}{
			{"ciphertext bit flipped", edit("ciphertext", flip), []string{"damaged or has been altered", "key is right"}},
			{"nonce bit flipped", edit("nonce", flip), []string{"damaged or has been altered"}},
			{"ciphertext truncated", edit("ciphertext", func(v any) any { return v.(string)[:8] }), []string{"damaged or has been altered"}},
			{"salt changed", edit("salt", flip), []string{"not the key the vault was sealed with", "header was altered"}},
			{"check changed", edit("check", flip), []string{"not the key the vault was sealed with"}},
			{"aead renamed", edit("aead", func(any) any { return "ROT13" }), []string{"damaged", "not a readable"}},
			{"unknown field", edit("extra", func(any) any { return 1 }), []string{"damaged"}},
			{"newer format", edit("version", func(any) any { return 2 }), []string{"newer buddi", "version 2"}},
			{"kdf changed", edit("kdf", func(any) any { return "argon2id" }), []string{"damaged"}},
			{"half the file", good[:len(good)/2], []string{"damaged"}},
			{"garbage", []byte("not json at all"), []string{"damaged"}},
			{"empty", nil, []string{"damaged"}},
			{"trailing data", append(bytes.Clone(good), "{}"...), []string{"damaged"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "vault.json")
				if err := os.WriteFile(path, tt.data, 0o600); err != nil {
					t.Fatal(err)
				}
				v, err := Open(Options{Backend: BackendFile, Path: path, Key: b.key})
				if err != nil {
					t.Fatal(err)
				}
				wantAllLocked(t, v, tt.words...)
				after, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(after, tt.data) {
					t.Error("a write to a locked vault changed the file")
				}
			})
		}
	})

	t.Run("FileMode", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		v := b.open(t, b.key)
		mustSet(t, v, "API_KEY", "sk-live-0123456789")
		mustSet(t, v, "API_KEY", "sk-live-9876543210") // a rewrite keeps the mode
		for _, p := range []string{b.path, b.path + ".lock"} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s has mode %v, want 0600", filepath.Base(p), fi.Mode().Perm())
			}
		}
		entries, err := os.ReadDir(b.dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 2 {
			t.Errorf("the directory holds %d entries, want vault.json and its lock: %v", len(entries), entries)
		}
	})

	t.Run("InvalidNames", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		v := b.open(t, b.key)
		for _, name := range []string{
			"", "api_key", "Api_Key", "1API", "_API", "API-KEY", "API KEY", "API.KEY", "API\n",
			"ÄPI", "buddi.index", strings.Repeat("A", 65),
		} {
			if err := v.Set(name, "value-123456"); !errors.Is(err, ErrInvalidName) {
				t.Errorf("Set(%q) = %v, want ErrInvalidName", name, err)
			}
			if _, err := v.Get(name); !errors.Is(err, ErrInvalidName) {
				t.Errorf("Get(%q) = %v, want ErrInvalidName", name, err)
			}
			if err := v.Delete(name); !errors.Is(err, ErrInvalidName) {
				t.Errorf("Delete(%q) = %v, want ErrInvalidName", name, err)
			}
		}
		for _, name := range []string{"A", "TELEGRAM_BOT_TOKEN", "K2", "A_", strings.Repeat("A", 64)} {
			if err := CheckName(name); err != nil {
				t.Errorf("CheckName(%q) = %v, want nil", name, err)
			}
		}
		for _, value := range []string{"", "\xff\xfe", strings.Repeat("x", MaxValueLen+1)} {
			if err := v.Set("API_KEY", value); !errors.Is(err, ErrInvalidValue) {
				t.Errorf("Set of a %d-byte value = %v, want ErrInvalidValue", len(value), err)
			}
		}
		if _, err := os.Stat(b.path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("refused sets created the file: %v", err)
		}
	})

	t.Run("KeyForms", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		raw, _ := base64.StdEncoding.DecodeString(b.key)
		mustSet(t, b.open(t, b.key), "API_KEY", "sk-live-0123456789")
		for _, key := range []string{
			base64.RawStdEncoding.EncodeToString(raw), base64.URLEncoding.EncodeToString(raw),
			base64.RawURLEncoding.EncodeToString(raw), hex.EncodeToString(raw),
			strings.ToUpper(hex.EncodeToString(raw)), "  " + b.key + "\n",
		} {
			if got, err := b.open(t, key).Get("API_KEY"); err != nil || got != "sk-live-0123456789" {
				t.Errorf("key form %q: got %q, %v", key, got, err)
			}
		}
	})

	t.Run("MissingKey", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		wantAllLocked(t, b.open(t, ""), "BUDDI_VAULT_KEY is not set")
		mustSet(t, b.open(t, b.key), "API_KEY", "sk-live-0123456789")
		wantAllLocked(t, b.open(t, ""), "BUDDI_VAULT_KEY is not set", b.path)
		wantAllLocked(t, b.open(t, "   "), "BUDDI_VAULT_KEY is not set")
		// Automatic choice: the file exists, so it is the file vault, locked; never the keychain.
		kc := newFakeKeychain()
		v, err := Open(Options{Path: b.path, Keychain: kc})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(v.String(), "file vault") {
			t.Errorf("auto picked %s though a vault file exists", v)
		}
		wantAllLocked(t, v, "BUDDI_VAULT_KEY is not set")
	})

	t.Run("NoValueInClear", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		v := b.open(t, b.key)
		secrets := map[string]string{
			"TELEGRAM_BOT_TOKEN": "123456789:AAH-bot-token-0123456789abcdef",
			"ANTHROPIC_API_KEY":  "sk-ant-api03-0123456789",
			"MAIL_PASSWORD":      "correct horse battery staple",
		}
		for name, value := range secrets {
			mustSet(t, v, name, value)
		}
		data, err := os.ReadFile(b.path)
		if err != nil {
			t.Fatal(err)
		}
		for name, value := range secrets {
			for _, form := range []string{
				name, value, value[:8], value[len(value)-8:],
				base64.StdEncoding.EncodeToString([]byte(value)), base64.RawURLEncoding.EncodeToString([]byte(value)),
				hex.EncodeToString([]byte(value)), url.QueryEscape(value),
			} {
				if bytes.Contains(data, []byte(form)) {
					t.Errorf("the file holds %q in clear (of %s)", form, name)
				}
			}
		}
		if bytes.Contains(data, []byte(b.key)) {
			t.Error("the file holds the key")
		}
	})

	t.Run("Passphrase", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		const pass = "correct horse battery staple"
		mustSet(t, b.open(t, pass), "API_KEY", "sk-live-0123456789")
		data, err := os.ReadFile(b.path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(`"kdf": "argon2id"`)) {
			t.Errorf("a passphrase-sealed file does not record argon2id:\n%s", data)
		}
		// Reopen with the package's default cost: the file's own cost is the one used.
		v, err := Open(Options{Backend: BackendFile, Path: b.path, Key: pass})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := v.Get("API_KEY"); err != nil || got != "sk-live-0123456789" {
			t.Errorf("reopened: got %q, %v", got, err)
		}
		wantAllLocked(t, b.open(t, "correct horse battery stapler"), "not the key the vault was sealed with")
		wantAllLocked(t, b.open(t, b.key), "sealed with a passphrase", "32-byte key")
		wantAllLocked(t, b.open(t, "short pass"), "too short")

		b2 := setup(t)
		mustSet(t, b2.open(t, b2.key), "API_KEY", "sk-live-0123456789")
		wantAllLocked(t, b2.open(t, pass), "sealed with a 32-byte key", "passphrase")
	})

	t.Run("Persistence", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		v := b.open(t, b.key)
		mustSet(t, v, "API_KEY", "sk-live-0123456789")
		mustSet(t, v, "BOT_TOKEN", "123:abc-def-ghi")
		if err := v.Delete("BOT_TOKEN"); err != nil {
			t.Fatal(err)
		}
		mustSet(t, v, "MAIL_PASSWORD", "hunter2-hunter2")
		again := b.open(t, b.key)
		names, err := again.List()
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"API_KEY", "MAIL_PASSWORD"}; !slices.Equal(names, want) {
			t.Errorf("got %v after reopening, want %v", names, want)
		}
		if got, err := again.Get("MAIL_PASSWORD"); err != nil || got != "hunter2-hunter2" {
			t.Errorf("got %q, %v", got, err)
		}
		// A write through one value is seen by another at once.
		mustSet(t, again, "LATE", "set-by-another-process")
		if got, err := v.Get("LATE"); err != nil || got != "set-by-another-process" {
			t.Errorf("got %q, %v", got, err)
		}
	})

	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		v := b.open(t, b.key)
		if err := v.Check(); err != nil {
			t.Fatalf("a new vault with a key: Check = %v", err)
		}
		if names, err := v.List(); err != nil || len(names) != 0 {
			t.Fatalf("empty vault: List = %v, %v", names, err)
		}
		if _, err := v.Get("API_KEY"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get of a missing secret = %v, want ErrNotFound", err)
		}
		mustSet(t, v, "API_KEY", "sk-live-0123456789")
		mustSet(t, v, "BOT_TOKEN", "123:abc\"def\\ghi\u00e9\u2028")
		mustSet(t, v, "API_KEY", "sk-live-replaced")
		if got, err := v.Get("API_KEY"); err != nil || got != "sk-live-replaced" {
			t.Errorf("Get = %q, %v", got, err)
		}
		if got, err := v.Get("BOT_TOKEN"); err != nil || got != "123:abc\"def\\ghi\u00e9\u2028" {
			t.Errorf("Get = %q, %v", got, err)
		}
		if ok, err := v.Present("API_KEY"); !ok || err != nil {
			t.Errorf("Present = %v, %v", ok, err)
		}
		if ok, err := v.Present("NOPE"); ok || err != nil {
			t.Errorf("Present of a missing secret = %v, %v", ok, err)
		}
		names, err := v.List()
		if err != nil || !slices.Equal(names, []string{"API_KEY", "BOT_TOKEN"}) {
			t.Errorf("List = %v, %v", names, err)
		}
		if err := v.Delete("API_KEY"); err != nil {
			t.Fatal(err)
		}
		if err := v.Delete("API_KEY"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second Delete = %v, want ErrNotFound", err)
		}
		values, err := v.Values()
		if err != nil || len(values) != 1 || values["BOT_TOKEN"] == "" {
			t.Errorf("Values = %v, %v", values, err)
		}
		if !strings.Contains(v.String(), b.path) {
			t.Errorf("String() = %q", v.String())
		}
	})

	t.Run("UnreadableFile", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if err := os.Mkdir(b.path, 0o700); err != nil { // a directory where the file should be
			t.Fatal(err)
		}
		wantAllLocked(t, b.open(t, b.key), "cannot be read")
	})

	t.Run("WrongKey", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		mustSet(t, b.open(t, b.key), "API_KEY", "sk-live-0123456789")
		before, _ := os.ReadFile(b.path)
		wantAllLocked(t, b.open(t, testKey(t)), "not the key the vault was sealed with")
		after, _ := os.ReadFile(b.path)
		if !bytes.Equal(before, after) {
			t.Error("a Set with the wrong key rewrote the file")
		}
		if got, err := b.open(t, b.key).Get("API_KEY"); err != nil || got != "sk-live-0123456789" {
			t.Errorf("the right key after a wrong one: %q, %v", got, err)
		}
	})
}

// TestTwoProcesses runs writers in two processes at once: with the lock file, no write is
// lost to a read-modify-write race. The child says "ready" on stdout and starts when the
// parent closes its stdin, so the two write at the same time.
func TestTwoProcesses(t *testing.T) {
	const perProcess = 40
	if path := os.Getenv("VAULT_TEST_CHILD_PATH"); path != "" {
		fmt.Println("ready")
		io.ReadAll(os.Stdin)
		writeMany(t, path, os.Getenv("VAULT_TEST_CHILD_KEY"), "CHILD", perProcess)
		return
	}
	t.Parallel()
	b := setup(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestTwoProcesses$", "-test.count=1")
	cmd.Env = append(os.Environ(), "VAULT_TEST_CHILD_PATH="+b.path, "VAULT_TEST_CHILD_KEY="+b.key)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	if line, err := r.ReadString('\n'); line != "ready\n" {
		t.Fatalf("child said %q, %v; stderr:\n%s", line, err, stderr.String())
	}
	stdin.Close()
	writeMany(t, b.path, b.key, "PARENT", perProcess)
	rest, _ := io.ReadAll(r)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s%s", err, rest, stderr.String())
	}
	names, err := b.open(t, b.key).List()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 2*perProcess {
		t.Errorf("got %d names after two processes wrote %d each: %v", len(names), perProcess, names)
	}
}

func writeMany(t *testing.T, path, key, prefix string, n int) {
	t.Helper()
	v, err := Open(Options{Backend: BackendFile, Path: path, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		mustSet(t, v, fmt.Sprintf("%s_%02d", prefix, i), "value-of-"+prefix)
	}
}
