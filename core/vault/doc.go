// Package vault holds the owner's secret values: model-provider keys, bot tokens, mail app
// passwords. Postgres holds secret names and bindings, never a value; the values live here,
// in the OS keychain (service "buddi") where there is one, or in a file vault
// (<BUDDI_HOME>/vault.json) sealed with BUDDI_VAULT_KEY, which is kept outside the file and
// the database.
//
// # Names
//
// A secret name matches ^[A-Z][A-Z0-9_]{0,63}$ (TELEGRAM_BOT_TOKEN, ANTHROPIC_API_KEY).
// Anything else is refused with ErrInvalidName. A value is non-empty UTF-8 text of at most
// 64 KiB.
//
// # Failing closed
//
// A vault that cannot be read is locked: no key, a wrong key, a file that does not
// authenticate, a file that cannot be read, a keychain that refuses or does not answer. Every
// operation on a locked vault fails with an error that matches ErrLocked (a *LockedError,
// whose Reason is one plain sentence for the owner); Get never returns an empty value in place
// of a secret, and a write never replaces a file it could not open.
//
// # BUDDI_VAULT_KEY
//
// Two forms are accepted (surrounding white space is ignored):
//
//   - A random 256-bit key: 32 bytes in base64 (standard or URL alphabet, padded or not) or
//     64 hex digits. Make one with `openssl rand -base64 32`. This is the recommended form: it
//     needs no stretching, so every process opens the vault at once.
//   - Any other string of at least 16 characters is a passphrase, stretched with Argon2id
//     (RFC 9106's second recommended setting: t=3, 64 MiB, 4 lanes; a per-file random
//     16-byte salt). A memory-hard KDF makes each guess at a remembered phrase cost tens of
//     milliseconds and 64 MiB; the parameters are stored in the file so they can be raised
//     later without locking out old files.
//
// Shorter strings are refused (the vault is locked) rather than used as weak keys. The file
// records which form sealed it, so using the other form says so instead of "wrong key".
//
// # Where the key lives
//
// The owner need not export the key. ResolveKey looks, in order, at BUDDI_VAULT_KEY, at the
// OS keychain's entry "vault-key" under service "buddi" (when a keychain answers and
// BUDDI_KEYCHAIN is not off), and at the key file os.UserConfigDir()/buddi/vault.key. A key
// file that anyone else could read or write, or that is not the owner's, is refused (the
// vault is locked, saying the chmod to run); it is never used and nothing falls back past it.
// CreateKey (what `buddi init` calls) draws a random 256-bit key and keeps it in the keychain,
// read back to be sure, else in a new 0600 key file; it never replaces one. OpenOwner is the
// one call buddi serve and the command line make, so they can never disagree about the key.
//
// # The file
//
// vault.json is one JSON object: a header (format version, KDF and its parameters, salt,
// a key check) and one AES-256-GCM ciphertext of all the secrets, names included. The header
// is the AEAD's additional data, so the whole file is authenticated; a fresh random 96-bit
// nonce is drawn for every write (a vault sees far fewer than the 2^32 writes after which
// random GCM nonces become a concern). The key check, an HMAC of a fixed string under a
// subkey, tells a wrong key (the check fails) from a damaged or altered file (the check
// passes, the ciphertext does not). Both subkeys come from the master key by HKDF-SHA256.
//
// Writes take an exclusive flock on the sibling file vault.json.lock, re-read the current
// file, and replace it atomically: a temporary file in the same directory (mode 0600),
// fsync, rename, fsync of the directory. Reads need no lock, since a rename is atomic, and
// read the file every time, so a secret set by `buddi vault set` in another process is seen
// by the running server without a restart.
//
// # The keychain
//
// The keychain backend uses github.com/zalando/go-keyring: the Secret Service over D-Bus on
// Linux, the login keychain on macOS, the Credential Manager on Windows. The keychain cannot
// enumerate entries, so the vault keeps an index of names in one more entry, "buddi.index"
// (not a valid secret name, so it cannot collide). Every keychain call is bounded by a
// timeout, and only one is in flight at a time, so a keychain that waits for an unlock prompt
// nobody will answer locks the vault instead of hanging a run.
package vault
