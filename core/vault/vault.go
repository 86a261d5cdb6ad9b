package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Vault stores secret values by name. Implementations are safe for concurrent use. Every
// method of a locked vault returns an error matching ErrLocked; no method ever returns a
// value it could not read as if it were empty.
type Vault interface {
	// Set stores value under name, replacing any earlier value.
	Set(name, value string) error
	// Get returns the value stored under name, or an error matching ErrNotFound or ErrLocked.
	Get(name string) (string, error)
	// Present reports whether a value is stored under name, without returning it: what
	// `buddi vault get` prints. A locked vault answers with an error, not with false.
	Present(name string) (bool, error)
	// Delete removes the value stored under name, or returns an error matching ErrNotFound.
	Delete(name string) error
	// List returns the stored names, sorted; never a value.
	List() ([]string, error)
	// Values returns every stored name and value, for the redactor (buddi/core/redact),
	// which must know every value to scrub it. Nothing else should need it.
	Values() (map[string]string, error)
	// Version returns a token that is different after every change of the stored values,
	// made by this process or another, without reading a value: the redactor (buddi/core/
	// redact) asks for it before each use, and rebuilds when it changed, so a secret stored
	// with `buddi vault set` while buddi serve runs is redacted from the next use on. (The OS
	// keychain's token changes with each change made through buddi; an entry edited in the
	// keychain's own application is seen at the next reload.)
	Version() (string, error)
	// Check returns nil when the vault can be read, or the *LockedError saying why not.
	Check() error
	// String says where the values live ("file vault /home/o/.buddi/vault.json",
	// "OS keychain (service buddi)"), never anything of a value.
	String() string
}

// Backend selects where the values live.
type Backend string

// The backends Open knows.
const (
	// BackendAuto (the zero value) picks the file vault when a key is given or the file
	// exists, the OS keychain when one answers, and otherwise a file vault that is locked
	// for want of a key.
	BackendAuto Backend = ""
	// BackendFile is the file vault at Options.Path, sealed with Options.Key.
	BackendFile Backend = "file"
	// BackendKeychain is the OS keychain, under Options.Service.
	BackendKeychain Backend = "keychain"
)

// DefaultService is the keychain service the values are stored under.
const DefaultService = "buddi"

// DefaultKeychainTimeout bounds each keychain call when Options.KeychainTimeout is zero.
const DefaultKeychainTimeout = 5 * time.Second

// Options says which vault Open returns. The zero value is not enough: Path is required
// for the file vault and for the lock file the keychain vault serialises its index with.
type Options struct {
	// Backend selects the store; the default, BackendAuto, picks as its doc says.
	Backend Backend
	// Path is the vault file, normally <BUDDI_HOME>/vault.json. Its directory also holds the
	// lock file vault.json.lock. Required.
	Path string
	// Key is BUDDI_VAULT_KEY (see the package doc for its forms). The vault never reads the
	// environment itself; the caller passes os.Getenv("BUDDI_VAULT_KEY"). Empty means the
	// file vault is locked.
	Key string
	// Service is the keychain service name. Default DefaultService ("buddi").
	Service string
	// Keychain is the OS keychain; nil means the real one (github.com/zalando/go-keyring).
	// Tests pass an in-memory one.
	Keychain Keychain
	// KeychainTimeout bounds each keychain call. Default DefaultKeychainTimeout.
	KeychainTimeout time.Duration

	// argon overrides the Argon2id cost of new passphrase-sealed files (tests only).
	argon *argonParams
	// keyName is what Key is called in the owner's sentences; default "BUDDI_VAULT_KEY".
	keyName string
}

// Open returns the vault opts select. It fails only on options that cannot work (no Path,
// an unknown backend); a vault that cannot be read is returned locked, so that a server
// still starts and every use of a secret fails closed with the reason: call Check to learn
// it up front.
func Open(opts Options) (Vault, error) {
	if opts.Path == "" {
		return nil, errors.New("vault: open: no path for the vault file")
	}
	if opts.Service == "" {
		opts.Service = DefaultService
	}
	if opts.KeychainTimeout <= 0 {
		opts.KeychainTimeout = DefaultKeychainTimeout
	}
	if opts.Keychain == nil {
		opts.Keychain = osKeychain{}
	}
	switch opts.Backend {
	case BackendFile:
		return newFileVault(opts), nil
	case BackendKeychain:
		return newKeychainVault(opts), nil
	case BackendAuto:
		if opts.Key != "" {
			return newFileVault(opts), nil
		}
		if _, err := os.Stat(opts.Path); !errors.Is(err, fs.ErrNotExist) {
			// The owner has a file vault (or something unreadable is in its place): never
			// switch stores behind their back. Without a key it is locked, and says so.
			return newFileVault(opts), nil
		}
		kv := newKeychainVault(opts)
		if err := kv.Check(); err == nil {
			return kv, nil
		}
		fv := newFileVault(opts)
		fv.noKeyReason = fmt.Sprintf("BUDDI_VAULT_KEY is not set and no OS keychain answers, so there is no vault to read: set BUDDI_VAULT_KEY (for example to the output of `openssl rand -base64 32`) to keep secrets in %s.", opts.Path)
		return fv, nil
	default:
		return nil, fmt.Errorf("vault: open: unknown backend %q (want %q, %q or empty for automatic)", opts.Backend, BackendFile, BackendKeychain)
	}
}
