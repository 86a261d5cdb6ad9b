package vault

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeKeychain is an in-memory keychain. block, when set, makes every call wait for it to be
// closed; fail, when set, is returned by every call.
type fakeKeychain struct {
	mu      sync.Mutex
	entries map[string]string
	block   chan struct{}
	fail    error
}

func newFakeKeychain() *fakeKeychain { return &fakeKeychain{entries: map[string]string{}} }

func (k *fakeKeychain) wait() error {
	k.mu.Lock()
	block, fail := k.block, k.fail
	k.mu.Unlock()
	if block != nil {
		<-block
	}
	return fail
}

func (k *fakeKeychain) Get(service, user string) (string, error) {
	if err := k.wait(); err != nil {
		return "", err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.entries[service+"/"+user]
	if !ok {
		return "", ErrNotFound
	}
	return v, nil
}

func (k *fakeKeychain) Set(service, user, password string) error {
	if err := k.wait(); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.entries[service+"/"+user] = password
	return nil
}

func (k *fakeKeychain) Delete(service, user string) error {
	if err := k.wait(); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.entries[service+"/"+user]; !ok {
		return ErrNotFound
	}
	delete(k.entries, service+"/"+user)
	return nil
}

func openKeychain(t *testing.T, kc Keychain, timeout time.Duration) Vault {
	t.Helper()
	v, err := Open(Options{Backend: BackendKeychain, Path: filepath.Join(t.TempDir(), "vault.json"), Keychain: kc, KeychainTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestKeychainVault(t *testing.T) {
	t.Parallel()

	t.Run("ConcurrentSet", func(t *testing.T) {
		t.Parallel()
		v := openKeychain(t, newFakeKeychain(), 0)
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() { mustSet(t, v, fmt.Sprintf("S_%02d", i), "value-123456") })
		}
		wg.Wait()
		names, err := v.List()
		if err != nil || len(names) != 16 {
			t.Errorf("List = %v, %v", names, err)
		}
	})

	t.Run("Refuses", func(t *testing.T) {
		t.Parallel()
		kc := newFakeKeychain()
		kc.fail = errors.New("org.freedesktop.DBus.Error.ServiceUnknown")
		v := openKeychain(t, kc, 0)
		wantAllLocked(t, v, "OS keychain refused")
		if err := v.Check(); !strings.Contains(err.Error(), "ServiceUnknown") {
			t.Errorf("the cause is lost: %v", err)
		}
	})

	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		kc := newFakeKeychain()
		v := openKeychain(t, kc, 0)
		if err := v.Check(); err != nil {
			t.Fatal(err)
		}
		mustSet(t, v, "API_KEY", "sk-live-0123456789")
		mustSet(t, v, "BOT_TOKEN", "123:abc-def-ghi")
		mustSet(t, v, "API_KEY", "sk-live-replaced")
		if got, err := v.Get("API_KEY"); err != nil || got != "sk-live-replaced" {
			t.Errorf("Get = %q, %v", got, err)
		}
		if kc.entries["buddi/API_KEY"] != "sk-live-replaced" {
			t.Errorf("entries: %v", kc.entries)
		}
		names, err := v.List()
		if err != nil || !slices.Equal(names, []string{"API_KEY", "BOT_TOKEN"}) {
			t.Errorf("List = %v, %v", names, err)
		}
		if ok, err := v.Present("NOPE"); ok || err != nil {
			t.Errorf("Present = %v, %v", ok, err)
		}
		if err := v.Delete("API_KEY"); err != nil {
			t.Fatal(err)
		}
		if err := v.Delete("API_KEY"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second Delete = %v", err)
		}
		if _, err := v.Get("API_KEY"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get after Delete = %v", err)
		}
		// A listed name whose entry vanished is skipped by Values and cleaned by Delete.
		mustSet(t, v, "GONE", "value-123456")
		delete(kc.entries, "buddi/GONE")
		values, err := v.Values()
		if err != nil || len(values) != 1 || values["BOT_TOKEN"] != "123:abc-def-ghi" {
			t.Errorf("Values = %v, %v", values, err)
		}
		if err := v.Delete("GONE"); err != nil {
			t.Errorf("Delete of a listed name without an entry = %v", err)
		}
		if names, _ := v.List(); !slices.Equal(names, []string{"BOT_TOKEN"}) {
			t.Errorf("List = %v", names)
		}
		if err := v.Set("buddi.index", "[]"); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Set of the index entry = %v", err)
		}
		kc.entries["buddi/"+indexUser] = "{not a list"
		wantLocked(t, v.Check(), "index", "damaged")
	})

	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		kc := newFakeKeychain()
		kc.block = make(chan struct{})
		t.Cleanup(func() { close(kc.block) }) // the stuck call ends, so goleak is content
		v := openKeychain(t, kc, 20*time.Millisecond)
		start := time.Now()
		wantLocked(t, v.Check(), "did not answer")
		wantLocked(t, v.Set("API_KEY", "value-123456"), "not answering")
		if _, err := v.Get("API_KEY"); !errors.Is(err, ErrLocked) {
			t.Errorf("Get = %v", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("three calls to a stuck keychain took %v", d)
		}
	})
}

func TestOpen(t *testing.T) {
	t.Parallel()

	t.Run("Auto", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		kc := newFakeKeychain()
		tests := []struct {
			name string
			opts Options
			want string
		}{
			{"key given", Options{Path: b.path, Key: b.key, Keychain: kc}, "file vault"},
			{"keychain answers", Options{Path: b.path, Keychain: kc}, "OS keychain"},
		}
		for _, tt := range tests {
			v, err := Open(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(v.String(), tt.want) {
				t.Errorf("%s: got %s, want %s", tt.name, v, tt.want)
			}
		}
		broken := newFakeKeychain()
		broken.fail = errors.New("no D-Bus session")
		v, err := Open(Options{Path: b.path, Keychain: broken})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(v.String(), "file vault") {
			t.Errorf("no key, no keychain: got %s", v)
		}
		wantAllLocked(t, v, "BUDDI_VAULT_KEY is not set and no OS keychain answers")
	})

	t.Run("BadOptions", func(t *testing.T) {
		t.Parallel()
		if _, err := Open(Options{}); err == nil {
			t.Error("Open without a path succeeded")
		}
		if _, err := Open(Options{Path: "x", Backend: "cloud"}); err == nil {
			t.Error("Open with an unknown backend succeeded")
		}
	})

	t.Run("Memory", func(t *testing.T) {
		t.Parallel()
		m := NewMemory(map[string]string{"API_KEY": "sk-live-0123456789"})
		if got, err := m.Get("API_KEY"); err != nil || got != "sk-live-0123456789" {
			t.Errorf("Get = %q, %v", got, err)
		}
		mustSet(t, m, "BOT_TOKEN", "123:abc-def-ghi")
		m.Lock("the test locked it")
		wantAllLocked(t, m, "the test locked it")
		m.Unlock()
		if names, err := m.List(); err != nil || len(names) != 2 {
			t.Errorf("List = %v, %v", names, err)
		}
	})
}
