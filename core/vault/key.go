package vault

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Key forms, as recorded in the file's "kdf" field.
const (
	kdfRaw      = "raw"      // BUDDI_VAULT_KEY is 32 random bytes, used as the master key
	kdfArgon2id = "argon2id" // BUDDI_VAULT_KEY is a passphrase, stretched with Argon2id
)

// minPassphrase is the shortest passphrase accepted, in characters.
const minPassphrase = 16

// argonParams is an Argon2id cost, stored in the file beside the salt.
type argonParams struct {
	Time      uint32 `json:"time"`
	MemoryKiB uint32 `json:"memory_kib"`
	Threads   uint8  `json:"threads"`
}

// defaultArgon is RFC 9106's second recommended setting (section 4): t=3, 64 MiB, p=4.
var defaultArgon = argonParams{Time: 3, MemoryKiB: 64 << 10, Threads: 4}

// ok reports whether stored parameters are within what this build will spend (a tampered
// header must not make Open allocate gigabytes).
func (p argonParams) ok() bool {
	return p.Time >= 1 && p.Time <= 16 && p.MemoryKiB >= 8*uint32(p.Threads) &&
		p.MemoryKiB <= 1<<20 && p.Threads >= 1
}

// userKey is BUDDI_VAULT_KEY, parsed.
type userKey struct {
	missing bool   // no key was given
	kdf     string // kdfRaw or kdfArgon2id
	raw     []byte // the 32-byte key (kdfRaw)
	pass    []byte // the passphrase (kdfArgon2id)
}

// keyProblem is why a BUDDI_VAULT_KEY cannot be used, as a sentence for the owner.
type keyProblem string

// parseKey reads the vault key, called name in the owner's sentences (BUDDI_VAULT_KEY, or
// where it was found). An empty or too-short key is a problem, never a weak key.
func parseKey(s, name string) (userKey, keyProblem) {
	s = strings.TrimSpace(s)
	if s == "" {
		return userKey{missing: true}, keyProblem(name + " is not set")
	}
	if raw, ok := decode32(s); ok {
		return userKey{kdf: kdfRaw, raw: raw}, ""
	}
	if utf8.RuneCountInString(s) < minPassphrase {
		return userKey{}, keyProblem(name + " is too short: use 32 random bytes in base64 (`openssl rand -base64 32`) or a passphrase of at least 16 characters")
	}
	return userKey{kdf: kdfArgon2id, pass: []byte(s)}, ""
}

// decode32 decodes s as 32 bytes in any of the accepted encodings.
func decode32(s string) ([]byte, bool) {
	if len(s) == 64 {
		if b, err := hex.DecodeString(s); err == nil {
			return b, true
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
			return b, true
		}
	}
	return nil, false
}

// subkeys are the two keys derived from the master key for one file.
type subkeys struct {
	seal  []byte // AES-256-GCM key
	check []byte // HMAC-SHA256 key for the key check
}

// derive turns the user's key into the file's subkeys, given the file's salt (and Argon2id
// cost for a passphrase).
func derive(k userKey, salt []byte, p argonParams) (subkeys, error) {
	master := k.raw
	if k.kdf == kdfArgon2id {
		master = argon2.IDKey(k.pass, salt, p.Time, p.MemoryKiB, p.Threads, 32)
	}
	seal, err := hkdf.Key(sha256.New, master, salt, "buddi vault v1 seal", 32)
	if err != nil {
		return subkeys{}, err
	}
	check, err := hkdf.Key(sha256.New, master, salt, "buddi vault v1 check", 32)
	if err != nil {
		return subkeys{}, err
	}
	return subkeys{seal: seal, check: check}, nil
}

// keyCheck is the value stored in the header that tells a wrong key from a damaged file.
func (s subkeys) keyCheck() []byte {
	m := hmac.New(sha256.New, s.check)
	m.Write([]byte("buddi vault v1 key check"))
	return m.Sum(nil)
}
