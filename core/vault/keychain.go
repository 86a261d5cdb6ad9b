package vault

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zalando/go-keyring"
)

// Keychain is an OS credential store as the vault uses it: entries keyed by service and
// user. Get and Delete return an error matching ErrNotFound for a missing entry.
type Keychain interface {
	// Get returns the entry's password.
	Get(service, user string) (string, error)
	// Set creates or replaces the entry.
	Set(service, user, password string) error
	// Delete removes the entry.
	Delete(service, user string) error
}

// osKeychain is the real keychain, through github.com/zalando/go-keyring.
type osKeychain struct{}

func (osKeychain) Get(service, user string) (string, error) {
	v, err := keyring.Get(service, user)
	return v, notFound(err)
}

func (osKeychain) Set(service, user, password string) error {
	return keyring.Set(service, user, password)
}

func (osKeychain) Delete(service, user string) error {
	return notFound(keyring.Delete(service, user))
}

// notFound maps go-keyring's missing entry to ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, keyring.ErrNotFound) {
		return ErrNotFound
	}
	return err
}

// indexUser is the keychain entry holding the sorted list of names (a JSON array). It is
// not a valid secret name, so no secret can overwrite it.
const indexUser = "buddi.index"

// keychainVault keeps each value in its own keychain entry, plus the index of names.
type keychainVault struct {
	kc       Keychain
	service  string
	timeout  time.Duration
	lockPath string

	mu  sync.Mutex    // serialises this value's index updates; the flock serialises processes
	sem chan struct{} // one keychain call in flight: a stuck one fails the rest fast
}

var _ Vault = (*keychainVault)(nil)

func newKeychainVault(opts Options) *keychainVault {
	return &keychainVault{
		kc:       opts.Keychain,
		service:  opts.Service,
		timeout:  opts.KeychainTimeout,
		lockPath: opts.Path + ".lock",
		sem:      make(chan struct{}, 1),
	}
}

// String names the keychain service.
func (v *keychainVault) String() string { return "OS keychain (service " + v.service + ")" }

// call runs fn against the keychain within the timeout. A call that does not return in time
// is left to finish on its own (a keychain call cannot be cancelled) and the vault reports
// itself locked.
func (v *keychainVault) call(fn func() error) error {
	timer := time.NewTimer(v.timeout)
	defer timer.Stop()
	select {
	case v.sem <- struct{}{}:
	case <-timer.C:
		return locked(nil, "The OS keychain is not answering: an earlier request has waited more than %s, perhaps for an unlock prompt.", v.timeout)
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-v.sem }()
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("keychain panicked: %v", p)
			}
		}()
		done <- fn()
	}()
	select {
	case err := <-done:
		if err == nil || errors.Is(err, ErrNotFound) {
			return err
		}
		return locked(err, "The OS keychain refused the vault's request.")
	case <-timer.C:
		return locked(nil, "The OS keychain did not answer within %s; it may be waiting for an unlock prompt.", v.timeout)
	}
}

func (v *keychainVault) get(user string) (string, error) {
	var out string
	err := v.call(func() error {
		s, err := v.kc.Get(v.service, user)
		out = s
		return err
	})
	return out, err
}

func (v *keychainVault) set(user, value string) error {
	return v.call(func() error { return v.kc.Set(v.service, user, value) })
}

func (v *keychainVault) del(user string) error {
	return v.call(func() error { return v.kc.Delete(v.service, user) })
}

// index returns the stored names, sorted.
func (v *keychainVault) index() ([]string, error) {
	raw, err := v.get(indexUser)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	if err := json.Unmarshal([]byte(raw), &names); err != nil {
		return nil, locked(err, "The vault's index in the OS keychain (service %s) is damaged.", v.service)
	}
	for _, n := range names {
		if CheckName(n) != nil {
			return nil, locked(nil, "The vault's index in the OS keychain (service %s) is damaged.", v.service)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// updateIndex applies change to the index under the in-process mutex and the lock file.
func (v *keychainVault) updateIndex(change func([]string) []string) error {
	idx, err := v.index()
	if err != nil {
		return err
	}
	next := change(slices.Clone(idx))
	if slices.Equal(next, idx) {
		return nil
	}
	raw, err := json.Marshal(next)
	if err != nil {
		return err
	}
	return v.set(indexUser, string(raw))
}

// changedPath is the file whose version is the keychain vault's: every change through buddi
// rewrites it (random contents), so another process sees the change at its next use.
func (v *keychainVault) changedPath() string {
	return strings.TrimSuffix(v.lockPath, ".lock") + ".changed"
}

// Version is the version of the change file.
func (v *keychainVault) Version() (string, error) { return fileVersion(v.changedPath()) }

// exclusive runs fn holding the in-process mutex and the lock file, and then records that
// the values may have changed (also when fn failed half-way).
func (v *keychainVault) exclusive(fn func() error) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(v.lockPath), 0o700); err != nil {
		return fmt.Errorf("vault: create %s: %w", filepath.Dir(v.lockPath), err)
	}
	unlock, err := lockFile(v.lockPath)
	if err != nil {
		return fmt.Errorf("vault: lock %s: %w", v.lockPath, err)
	}
	defer unlock()
	ferr := fn()
	stamp := make([]byte, 16)
	_, _ = rand.Read(stamp)
	if err := writeAtomic(v.changedPath(), []byte(hex.EncodeToString(stamp)+"\n")); err != nil {
		return errors.Join(ferr, fmt.Errorf("vault: record the change in %s (a running buddi may not see it until it reloads): %w", v.changedPath(), err))
	}
	return ferr
}

// Set adds name to the index, then stores the value: a crash in between leaves a listed
// name without a value (harmless), never a value the redactor does not know of.
func (v *keychainVault) Set(name, value string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := checkValue(name, value); err != nil {
		return err
	}
	return v.exclusive(func() error {
		err := v.updateIndex(func(idx []string) []string {
			if i, found := slices.BinarySearch(idx, name); !found {
				idx = slices.Insert(idx, i, name)
			}
			return idx
		})
		if err != nil {
			return err
		}
		return v.set(name, value)
	})
}

// Get returns the value stored under name.
func (v *keychainVault) Get(name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	value, err := v.get(name)
	if errors.Is(err, ErrNotFound) {
		return "", &NotFoundError{Name: name}
	}
	return value, err
}

// Present reports whether name has a value.
func (v *keychainVault) Present(name string) (bool, error) {
	_, err := v.Get(name)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Delete removes the value, then the name from the index.
func (v *keychainVault) Delete(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	return v.exclusive(func() error {
		err := v.del(name)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		missing := err != nil
		listed := false
		err = v.updateIndex(func(idx []string) []string {
			return slices.DeleteFunc(idx, func(n string) bool {
				listed = listed || n == name
				return n == name
			})
		})
		if err != nil {
			return err
		}
		if missing && !listed {
			return &NotFoundError{Name: name}
		}
		return nil
	})
}

// List returns the names in the index.
func (v *keychainVault) List() ([]string, error) {
	return v.index()
}

// Values reads every listed entry. A listed name whose entry is gone is skipped.
func (v *keychainVault) Values() (map[string]string, error) {
	names, err := v.index()
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(names))
	for _, n := range names {
		value, err := v.get(n)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[n] = value
	}
	return out, nil
}

// Check returns nil when the keychain answers.
func (v *keychainVault) Check() error {
	_, err := v.index()
	return err
}
