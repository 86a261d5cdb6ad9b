package vault

import (
	"sync"
	"time"
)

// rekeyEvery is how often a vault that waits for its key looks for it again.
const rekeyEvery = time.Second

// awaitingKey is the owner's file vault opened before any key existed: locked, saying to run
// `buddi init`. It looks for the key again (ResolveKey, at most once a rekeyEvery) whenever
// it is used while locked, and once the key is there it is the vault sealed with it. So a
// buddi serve started before `buddi init` opens its vault when init has made the key, with no
// restart.
type awaitingKey struct {
	path string
	o    KeyOptions

	mu     sync.Mutex
	inner  Vault // the locked vault, then the open one
	opened bool
	tried  time.Time
}

var _ Vault = (*awaitingKey)(nil)

// current is the vault to use now: the open one once the key is found and opens the vault.
// The look for the key (which may ask the OS keychain) runs outside the lock, so uses of the
// vault meanwhile answer at once, locked.
func (a *awaitingKey) current() Vault {
	a.mu.Lock()
	if a.opened || time.Since(a.tried) < rekeyEvery {
		v := a.inner
		a.mu.Unlock()
		return v
	}
	a.tried = time.Now()
	locked := a.inner
	a.mu.Unlock()

	key, err := ResolveKey(a.o)
	if err != nil || key.Source == KeyNowhere {
		return locked
	}
	v, _, err := OpenWithKey(a.path, a.o)
	if err != nil {
		return locked
	}
	if _, still := v.(*awaitingKey); still || v.Check() != nil {
		return locked // a key that does not open the vault is not taken
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.opened {
		a.inner, a.opened = v, true
	}
	return a.inner
}

// Set stores value in the current vault.
func (a *awaitingKey) Set(name, value string) error { return a.current().Set(name, value) }

// Get reads name from the current vault.
func (a *awaitingKey) Get(name string) (string, error) { return a.current().Get(name) }

// Present asks the current vault whether name is stored.
func (a *awaitingKey) Present(name string) (bool, error) { return a.current().Present(name) }

// Delete removes name from the current vault.
func (a *awaitingKey) Delete(name string) error { return a.current().Delete(name) }

// List lists the current vault's names.
func (a *awaitingKey) List() ([]string, error) { return a.current().List() }

// Values returns the current vault's values, for the redactor.
func (a *awaitingKey) Values() (map[string]string, error) { return a.current().Values() }

// Version is the current vault's change token.
func (a *awaitingKey) Version() (string, error) { return a.current().Version() }

// Check says whether the current vault opens.
func (a *awaitingKey) Check() error { return a.current().Check() }

// String names the current vault.
func (a *awaitingKey) String() string { return a.current().String() }
