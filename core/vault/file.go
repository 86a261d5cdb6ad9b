package vault

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// fileVault is the vault in one file sealed with BUDDI_VAULT_KEY.
type fileVault struct {
	path        string
	key         userKey
	problem     keyProblem // why the key cannot be used, if it cannot
	noKeyReason string     // replaces the no-key sentence when Open chose this vault by default
	keyName     string     // what the key is called in the owner's sentences ("BUDDI_VAULT_KEY")
	newArgon    argonParams

	mu sync.Mutex // serialises this value's writes; the flock serialises processes

	cacheMu sync.Mutex
	cache   *derivedKeys // the subkeys for the last salt seen
}

// derivedKeys caches one derivation, so a passphrase is stretched once per process, not
// once per read.
type derivedKeys struct {
	salt  []byte
	argon argonParams
	keys  subkeys
}

var _ Vault = (*fileVault)(nil)

func newFileVault(opts Options) *fileVault {
	v := &fileVault{path: opts.Path, newArgon: defaultArgon, keyName: opts.keyName}
	if v.keyName == "" {
		v.keyName = "BUDDI_VAULT_KEY"
	}
	if opts.argon != nil {
		v.newArgon = *opts.argon
	}
	v.key, v.problem = parseKey(opts.Key, v.keyName)
	return v
}

// String names the file.
func (v *fileVault) String() string { return "file vault " + v.path }

// contents is one reading of the file.
type contents struct {
	exists  bool
	hdr     header
	keys    subkeys
	secrets map[string]string
}

// read reads and opens the file. A missing file is an empty vault (when there is a key);
// anything that cannot be read or authenticated is a *LockedError.
func (v *fileVault) read() (*contents, error) {
	if v.problem != "" {
		if v.key.missing && v.noKeyReason != "" {
			return nil, locked(nil, "%s", v.noKeyReason)
		}
		return nil, locked(nil, "%s, so the vault %s cannot be opened.", v.problem, v.path)
	}
	data, err := os.ReadFile(v.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &contents{secrets: map[string]string{}}, nil
	}
	if err != nil {
		return nil, locked(err, "The vault file %s cannot be read.", v.path)
	}
	doc, err := parseDoc(data)
	var newer *newerError
	if errors.As(err, &newer) {
		return nil, locked(err, "The vault file %s was written by a newer buddi (format version %d); upgrade buddi to read it.", v.path, newer.version)
	}
	if err != nil {
		return nil, locked(err, "The vault file %s is damaged: it is not a readable buddi vault file.", v.path)
	}
	if doc.KDF != v.key.kdf {
		if doc.KDF == kdfArgon2id {
			return nil, locked(nil, "%s does not open the vault %s: the vault was sealed with a passphrase, and %s holds a 32-byte key.", v.keyName, v.path, v.keyName)
		}
		return nil, locked(nil, "%s does not open the vault %s: the vault was sealed with a 32-byte key, and %s holds a passphrase.", v.keyName, v.path, v.keyName)
	}
	var argon argonParams
	if doc.Argon != nil {
		argon = *doc.Argon
	}
	keys, err := v.derive(doc.Salt, argon)
	if err != nil {
		return nil, locked(err, "The vault %s cannot be opened: deriving its key failed.", v.path)
	}
	if !hmac.Equal(keys.keyCheck(), doc.Check) {
		return nil, locked(nil, "%s does not open the vault %s: it is not the key the vault was sealed with (or the file's header was altered).", v.keyName, v.path)
	}
	secrets, err := open(doc, keys)
	if err != nil {
		return nil, locked(err, "The vault file %s is damaged or has been altered: the key is right, but its contents fail authentication.", v.path)
	}
	return &contents{exists: true, hdr: doc.header, keys: keys, secrets: secrets}, nil
}

// derive returns the subkeys for salt, from the cache when the salt is the last one seen.
func (v *fileVault) derive(salt []byte, argon argonParams) (subkeys, error) {
	v.cacheMu.Lock()
	defer v.cacheMu.Unlock()
	if c := v.cache; c != nil && bytes.Equal(c.salt, salt) && c.argon == argon {
		return c.keys, nil
	}
	keys, err := derive(v.key, salt, argon)
	if err != nil {
		return subkeys{}, err
	}
	v.cache = &derivedKeys{salt: bytes.Clone(salt), argon: argon, keys: keys}
	return keys, nil
}

// update applies change to the stored secrets and writes the result, holding the lock file
// from the read to the rename so no other process's write is lost.
func (v *fileVault) update(change func(secrets map[string]string) error) error {
	if v.problem != "" {
		_, err := v.read()
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	dir := filepath.Dir(v.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("vault: create %s: %w", dir, err)
	}
	unlock, err := lockFile(v.path + ".lock")
	if err != nil {
		return fmt.Errorf("vault: lock %s: %w", v.path+".lock", err)
	}
	defer unlock()
	c, err := v.read()
	if err != nil {
		return err
	}
	if err := change(c.secrets); err != nil {
		return err
	}
	if !c.exists {
		c.hdr = header{Format: formatName, Version: formatVersion, KDF: v.key.kdf, AEAD: aeadName, Salt: make([]byte, saltLen)}
		if _, err := rand.Read(c.hdr.Salt); err != nil {
			return err
		}
		var argon argonParams
		if v.key.kdf == kdfArgon2id {
			argon = v.newArgon
			c.hdr.Argon = &argon
		}
		if c.keys, err = v.derive(c.hdr.Salt, argon); err != nil {
			return fmt.Errorf("vault: derive key: %w", err)
		}
		c.hdr.Check = c.keys.keyCheck()
	}
	data, err := seal(c.hdr, c.keys, c.secrets)
	if err != nil {
		return fmt.Errorf("vault: seal: %w", err)
	}
	if err := writeAtomic(v.path, data); err != nil {
		return fmt.Errorf("vault: write %s: %w", v.path, err)
	}
	return nil
}

// writeAtomic replaces path with data: a temporary file beside it (mode 0600), fsync,
// rename, fsync of the directory. A reader sees the old file or the new one, never a part.
func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, fs.ErrInvalid) {
		return err
	}
	return nil
}

// Set stores value under name.
func (v *fileVault) Set(name, value string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := checkValue(name, value); err != nil {
		return err
	}
	return v.update(func(s map[string]string) error {
		s[name] = value
		return nil
	})
}

// Get returns the value stored under name.
func (v *fileVault) Get(name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	c, err := v.read()
	if err != nil {
		return "", err
	}
	value, ok := c.secrets[name]
	if !ok {
		return "", &NotFoundError{Name: name}
	}
	return value, nil
}

// Present reports whether name has a value.
func (v *fileVault) Present(name string) (bool, error) {
	_, err := v.Get(name)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Delete removes name.
func (v *fileVault) Delete(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	return v.update(func(s map[string]string) error {
		if _, ok := s[name]; !ok {
			return &NotFoundError{Name: name}
		}
		delete(s, name)
		return nil
	})
}

// List returns the stored names, sorted.
func (v *fileVault) List() ([]string, error) {
	c, err := v.read()
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(c.secrets)), nil
}

// Values returns every name and value.
func (v *fileVault) Values() (map[string]string, error) {
	c, err := v.read()
	if err != nil {
		return nil, err
	}
	return c.secrets, nil
}

// Version is the file's version: every write replaces the file (a new inode, a new nonce).
func (v *fileVault) Version() (string, error) { return fileVersion(v.path) }

// Check returns nil when the file can be opened with the key.
func (v *fileVault) Check() error {
	_, err := v.read()
	return err
}
