package vault

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"buddi/internal/securefile"
)

// KeyUser is the keychain entry, under the service, that holds the vault key. It is not a
// valid secret name, so no secret can overwrite it.
const KeyUser = "vault-key"

// KeySource says where the vault key was found.
type KeySource string

// The places ResolveKey looks, in its order.
const (
	KeyFromEnv      KeySource = "environment" // BUDDI_VAULT_KEY
	KeyFromKeychain KeySource = "keychain"    // the OS keychain, service "buddi", entry KeyUser
	KeyFromFile     KeySource = "file"        // the key file, os.UserConfigDir()/buddi/vault.key
	KeyNowhere      KeySource = ""            // no key anywhere
)

// maxKeyFile bounds what is read from a key file (a key is 44 characters; a passphrase
// rarely more than a line).
const maxKeyFile = 4096

// KeyOptions says where ResolveKey and CreateKey look for the vault key.
type KeyOptions struct {
	// Env is BUDDI_VAULT_KEY's value; when not empty it is the key, whatever else exists.
	Env string
	// NoKeychain keeps the OS keychain out entirely (BUDDI_KEYCHAIN=off): the key is never
	// looked for or kept there, and the secrets are never kept there either.
	NoKeychain bool
	// Keychain is the OS keychain; nil means the real one. Tests pass an in-memory one.
	Keychain Keychain
	// Service is the keychain service. Default DefaultService ("buddi").
	Service string
	// Timeout bounds each keychain call. Default DefaultKeychainTimeout.
	Timeout time.Duration
	// File is the key file; empty means there is none to read or write (no config
	// directory could be found).
	File string
}

// Key is the vault key and where it was found.
type Key struct {
	// Value is the key itself; empty when Source is KeyNowhere.
	Value string `json:"-"`
	// Source says where it was found.
	Source KeySource `json:"source"`
	// Where names the place for the owner: "BUDDI_VAULT_KEY", "the OS keychain (service
	// buddi, entry vault-key)", or the key file's path.
	Where string `json:"where"`
	// Keychain says why the keychain was not used, when it was looked at and did not answer
	// (or was switched off); empty otherwise.
	Keychain string `json:"keychain,omitempty"`
}

// DefaultKeyFile is the key file in the owner's configuration directory:
// os.UserConfigDir()/buddi/vault.key (~/.config/buddi/vault.key on Linux).
func DefaultKeyFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("vault: find the configuration directory for the key file (set XDG_CONFIG_HOME or HOME, or BUDDI_VAULT_KEY): %w", err)
	}
	return filepath.Join(dir, "buddi", "vault.key"), nil
}

// OwnerKeyOptions reads the owner's choices from the environment through getenv:
// BUDDI_VAULT_KEY and BUDDI_KEYCHAIN (auto, the default, or off); the key file is
// DefaultKeyFile. buddi serve and the command line both call it, so they look in the same
// places in the same order and can never disagree about the key.
func OwnerKeyOptions(getenv func(string) string) (KeyOptions, error) {
	o := KeyOptions{Env: getenv("BUDDI_VAULT_KEY")}
	switch v := strings.ToLower(strings.TrimSpace(getenv("BUDDI_KEYCHAIN"))); v {
	case "", "auto", "on":
	case "off":
		o.NoKeychain = true
	default:
		return o, fmt.Errorf("BUDDI_KEYCHAIN=%q is neither auto nor off: say off to keep the vault and its key out of the OS keychain", v)
	}
	if f, err := DefaultKeyFile(); err == nil {
		o.File = f
	}
	return o, nil
}

func (o KeyOptions) withDefaults() KeyOptions {
	if o.Service == "" {
		o.Service = DefaultService
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultKeychainTimeout
	}
	if o.Keychain == nil {
		o.Keychain = osKeychain{}
	}
	return o
}

// keychainWhere names the keychain entry for the owner.
func (o KeyOptions) keychainWhere() string {
	return fmt.Sprintf("the OS keychain (service %s, entry %s)", o.Service, KeyUser)
}

// keychain is a keychain vault used only for its bounded calls.
func (o KeyOptions) keychain() *keychainVault {
	return &keychainVault{kc: o.Keychain, service: o.Service, timeout: o.Timeout, sem: make(chan struct{}, 1)}
}

// ResolveKey finds the vault key: BUDDI_VAULT_KEY when set; else the OS keychain's entry
// when a keychain answers and holds one; else the key file. No key anywhere is not an
// error (Source is KeyNowhere). A key file that others could read or that is not the
// owner's is refused with a *LockedError naming the command that fixes it: it is never
// used, and nothing falls back past it.
func ResolveKey(o KeyOptions) (Key, error) {
	o = o.withDefaults()
	if strings.TrimSpace(o.Env) != "" {
		return Key{Value: o.Env, Source: KeyFromEnv, Where: "BUDDI_VAULT_KEY"}, nil
	}
	var note string
	if o.NoKeychain {
		note = "BUDDI_KEYCHAIN=off"
	} else {
		value, err := o.keychain().get(KeyUser)
		switch {
		case err == nil && strings.TrimSpace(value) != "":
			return Key{Value: value, Source: KeyFromKeychain, Where: o.keychainWhere()}, nil
		case err == nil, errors.Is(err, ErrNotFound):
			// The keychain answers and holds no key.
		default:
			note = "the OS keychain did not answer: " + err.Error()
		}
	}
	if o.File == "" {
		return Key{Keychain: note}, nil
	}
	value, err := readKeyFile(o.File)
	if errors.Is(err, fs.ErrNotExist) {
		return Key{Keychain: note}, nil
	}
	if err != nil {
		return Key{Keychain: note}, err
	}
	return Key{Value: value, Source: KeyFromFile, Where: o.File, Keychain: note}, nil
}

// readKeyFile reads a key file after checking, on the open file, that it is a regular file
// of the owner's that nobody else can read or write.
func readKeyFile(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err != nil {
		return "", locked(err, "The vault key file %s cannot be read: check its permissions (`chmod 600 %s`).", path, path)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", locked(err, "The vault key file %s cannot be read.", path)
	}
	if !fi.Mode().IsRegular() {
		return "", locked(nil, "The vault key file %s is not a regular file: replace it with the key, or remove it and run `buddi init`.", path)
	}
	if err := checkKeyFileOwner(path, fi); err != nil {
		return "", err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", locked(nil, "The vault key file %s can be read or written by others (mode %04o), so buddi does not use it: run `chmod 600 %s`.", path, perm, path)
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return "", locked(err, "The vault key file %s cannot be read.", path)
	}
	if len(raw) > maxKeyFile {
		return "", locked(nil, "The vault key file %s is longer than a key (%d bytes or more): put only the key in it.", path, maxKeyFile)
	}
	value := strings.TrimSpace(string(raw))
	if value == "" {
		return "", locked(nil, "The vault key file %s is empty: put the vault's key in it, or remove it and run `buddi init` if the vault holds nothing yet.", path)
	}
	return value, nil
}

// NewKey returns a fresh random 256-bit vault key in base64.
func NewKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("vault: draw a key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// CreateKey makes a new random vault key and keeps it where ResolveKey will find it: in the
// OS keychain when one answers (and the key reads back the same), else in the key file,
// created with mode 0600 in a 0700 directory. It never replaces a key: a key file that
// exists already is an error. The caller checks first that ResolveKey finds none.
func CreateKey(o KeyOptions) (Key, error) {
	o = o.withDefaults()
	value, err := NewKey()
	if err != nil {
		return Key{}, err
	}
	var note string
	if o.NoKeychain {
		note = "BUDDI_KEYCHAIN=off"
	} else {
		kc := o.keychain()
		err := kc.set(KeyUser, value)
		if err == nil {
			var back string
			back, err = kc.get(KeyUser)
			if err == nil && back != value {
				err = errors.New("the key read back is not the key written")
			}
		}
		if err == nil {
			return Key{Value: value, Source: KeyFromKeychain, Where: o.keychainWhere()}, nil
		}
		note = "the OS keychain did not answer: " + err.Error()
	}
	if o.File == "" {
		return Key{}, errors.New("vault: no OS keychain answers and no configuration directory was found for the key file: set XDG_CONFIG_HOME (or HOME), or set BUDDI_VAULT_KEY to the output of `openssl rand -base64 32`")
	}
	if err := writeKeyFile(o.File, value); err != nil {
		return Key{}, err
	}
	return Key{Value: value, Source: KeyFromFile, Where: o.File, Keychain: note}, nil
}

// writeKeyFile creates path (never replacing one) holding value, mode 0600, durably. The key
// is published whole (internal/securefile), so nobody reads the key file before it holds the
// key and a crash leaves no half-written one.
func writeKeyFile(path, value string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("vault: create the key file's directory %s: %w", dir, err)
	}
	err := securefile.Create(path, []byte(value+"\n"))
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("vault: the key file %s exists already; buddi never replaces a key (move it away only if no vault is sealed with it): %w", path, err)
	}
	if err != nil {
		return fmt.Errorf("vault: create the key file %s: %w", path, err)
	}
	return syncDir(dir)
}

// OpenOwner opens the owner's vault at path with the key found as OwnerKeyOptions(getenv)
// and ResolveKey say. It is the one way buddi serve and the command line open the vault.
func OpenOwner(path string, getenv func(string) string) (Vault, Key, error) {
	o, err := OwnerKeyOptions(getenv)
	if err != nil {
		return nil, Key{}, err
	}
	return OpenWithKey(path, o)
}

// OpenWithKey opens the vault at path with the key ResolveKey finds under o. With a key,
// it is the file vault sealed with it. Without one, it is what Open picks (an existing
// file stays a file vault, locked; otherwise the OS keychain's own vault when one answers
// and BUDDI_KEYCHAIN is not off), and a locked vault says to run `buddi init`. A key file
// that is refused gives a vault locked for that reason. Like Open, it fails only on
// options that cannot work.
func OpenWithKey(path string, o KeyOptions) (Vault, Key, error) {
	o = o.withDefaults()
	base := Options{Path: path, Service: o.Service, Keychain: o.Keychain, KeychainTimeout: o.Timeout}
	if o.NoKeychain {
		base.Backend = BackendFile
	}
	key, err := ResolveKey(o)
	if err != nil {
		var le *LockedError
		if !errors.As(err, &le) {
			return nil, key, err
		}
		base.Backend = BackendFile
		v, oerr := Open(base)
		if oerr != nil {
			return nil, key, oerr
		}
		v.(*fileVault).noKeyReason = le.Reason
		return v, key, nil
	}
	if key.Source != KeyNowhere {
		base.Key = key.Value
		if key.Source != KeyFromEnv {
			base.keyName = "the vault key in " + key.Where
		}
		v, err := Open(base)
		return v, key, err
	}
	v, err := Open(base)
	if err != nil {
		return nil, key, err
	}
	if fv, ok := v.(*fileVault); ok {
		fv.noKeyReason = noKeySentence(path, o, key)
		// No key anywhere yet: the vault opens by itself once buddi init makes one.
		return &awaitingKey{path: path, o: o, inner: fv}, key, nil
	}
	return v, key, nil
}

// noKeySentence says that no key was found anywhere, and the one step to take.
func noKeySentence(path string, o KeyOptions, key Key) string {
	looked := "BUDDI_VAULT_KEY is not set"
	if o.NoKeychain {
		looked += ", the OS keychain is off (BUDDI_KEYCHAIN=off)"
	} else if key.Keychain != "" {
		looked += ", no OS keychain answers"
	} else {
		looked += ", the OS keychain holds no vault key"
	}
	if o.File != "" {
		looked += " and there is no key file " + o.File
	}
	if _, err := os.Stat(path); err == nil {
		return fmt.Sprintf("No key opens the vault %s: %s. Set BUDDI_VAULT_KEY to the key it was sealed with.", path, looked)
	}
	return fmt.Sprintf("There is no vault key yet: %s. Run `buddi init` to create one (or set BUDDI_VAULT_KEY).", looked)
}
