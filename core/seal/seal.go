// Package seal keys the rows that carry the owner's authority, so that whoever can write
// the database (its administrators, the postgres account, anything holding the role's
// password) cannot forge them: an approved action, a decision and who made it, a standing
// permission, a sign-in ticket or session. Each such row carries an HMAC-SHA256 under the
// installation's key, which lives in a 0600 file in the data directory
// (<BUDDI_HOME>/seal.key), never in the database. buddi's process and the owner's command
// line read it; another local account cannot, and neither can the developer agent's code,
// whose box hides the data directory.
//
// A seal is bound to a purpose (a short name such as "action" or "decision") and to an
// ordered list of fields, each length-prefixed, so no two different field lists give the
// same input.
package seal

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"buddi/internal/securefile"
)

// FileName is the key file's name inside the data directory.
const FileName = "seal.key"

// Key is the installation's sealing key. The zero Key seals nothing: Seal panics and Check
// refuses, so a forgotten key fails closed.
type Key struct {
	k []byte
}

// ErrNoKey is a zero Key asked to check a seal.
var ErrNoKey = errors.New("seal: no key")

// New returns a Key over raw, which must be at least 32 bytes. Tests use it with a fixed key.
func New(raw []byte) (Key, error) {
	if len(raw) < 32 {
		return Key{}, fmt.Errorf("seal: a key needs at least 32 bytes, not %d", len(raw))
	}
	return Key{k: append([]byte(nil), raw...)}, nil
}

// IsZero reports whether k holds no key.
func (k Key) IsZero() bool { return len(k.k) == 0 }

// Seal returns the hex HMAC-SHA256 of purpose and fields under k.
func (k Key) Seal(purpose string, fields ...string) string {
	if k.IsZero() {
		panic("seal: Seal with no key")
	}
	m := hmac.New(sha256.New, k.k)
	write := func(s string) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(s)))
		m.Write(n[:])
		io.WriteString(m, s)
	}
	write("buddi seal v1")
	write(purpose)
	for _, f := range fields {
		write(f)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Check reports whether sum is the seal of purpose and fields under k, in constant time. A
// zero key checks nothing true.
func (k Key) Check(sum, purpose string, fields ...string) bool {
	if k.IsZero() || sum == "" {
		return false
	}
	return hmac.Equal([]byte(sum), []byte(k.Seal(purpose, fields...)))
}

// Load reads the key from <home>/seal.key, creating it (32 random bytes, mode 0600) the first
// time. A key file that is a link, is not a regular file, belongs to another account or can be
// read by anyone but its owner is refused: the key is only as secret as its file.
func Load(home string) (Key, error) {
	raw, err := ReadOrCreate(filepath.Join(home, FileName), 32)
	if err != nil {
		return Key{}, err
	}
	return New(raw)
}

// ReadOrCreate returns the secret in the file at path, creating it with n random bytes (kept
// as base64 text, mode 0600) when it does not exist. Two processes racing to create it agree:
// each publishes its secret whole (internal/securefile), which fails when path already
// exists; the loser reads the winner's. A reader therefore never sees the file before it
// holds the whole secret. The file must be a regular file of this account,
// readable by no one else, and not a link.
func ReadOrCreate(path string, n int) ([]byte, error) {
	for range 3 {
		raw, err := readSecret(path)
		if err == nil {
			return raw, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		b := make([]byte, n)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		err = securefile.Create(path, []byte(base64.StdEncoding.EncodeToString(b)+"\n"))
		if errors.Is(err, os.ErrExist) {
			continue // another process made it: read theirs
		}
		if err != nil {
			return nil, fmt.Errorf("create %s: %w (check that BUDDI_HOME is writable)", path, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("read %s: it keeps appearing and disappearing", path)
}

// Renew replaces the secret in the file at path with n new random bytes (written to a
// temporary file, synced, then renamed over it, so a reader sees the old secret or the new
// one, never half of either) and returns them.
func Renew(path string, n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("renew %s: %w", path, err)
	}
	tmp, err := securefile.Temp(path, []byte(base64.StdEncoding.EncodeToString(b)+"\n"))
	if err != nil {
		return nil, fmt.Errorf("renew %s: %w (check that BUDDI_HOME is writable)", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("renew %s: %w", path, err)
	}
	return b, nil
}

// ReadSecret reads a secret file written by ReadOrCreate, with the same checks, without
// creating it; a missing file is an error matching os.ErrNotExist.
func ReadSecret(path string) ([]byte, error) { return readSecret(path) }

// readSecret reads and checks a secret file written by ReadOrCreate.
func readSecret(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a link: buddi reads its secrets only from a plain file (remove the link)", path)
		}
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file: remove it and buddi makes a new one", path)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("%s can be read by other accounts (mode %v): run `chmod 600 %s`", path, fi.Mode().Perm(), path)
	case st != nil && int(st.Uid) != os.Geteuid():
		return nil, fmt.Errorf("%s belongs to another account (uid %d): buddi uses only its own account's secrets", path, st.Uid)
	}
	text, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(text)))
	if err != nil || len(raw) < 32 {
		return nil, fmt.Errorf("%s is damaged: stop buddi, remove the file and start it again (what it sealed must then be signed in or approved again)", path)
	}
	return raw, nil
}
