package vault

import (
	"errors"
	"fmt"
)

// Sentinel errors; the errors returned by a Vault match them with errors.Is.
var (
	// ErrLocked: the vault cannot be read (no key, wrong key, a damaged or unreadable file, a
	// keychain that refuses). The error is a *LockedError saying which.
	ErrLocked = errors.New("vault: locked")
	// ErrNotFound: no secret of that name is stored.
	ErrNotFound = errors.New("vault: no such secret")
	// ErrInvalidName: the name does not match NamePattern.
	ErrInvalidName = errors.New("vault: invalid secret name")
	// ErrInvalidValue: the value is empty, not UTF-8, or longer than MaxValueLen.
	ErrInvalidValue = errors.New("vault: invalid secret value")
)

// LockedError says why a vault is locked. Reason is one plain sentence for the owner; Err is
// the underlying cause, if any, for the log. It matches ErrLocked.
type LockedError struct {
	// Reason is a sentence for the owner, such as "BUDDI_VAULT_KEY is not set, so the vault
	// at /home/o/.buddi/vault.json cannot be opened."
	Reason string
	// Err is the cause (an I/O error, a keychain error), or nil.
	Err error
}

// Error returns "vault: locked: " and the reason, and the cause when there is one.
func (e *LockedError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("vault: locked: %s (%v)", e.Reason, e.Err)
	}
	return "vault: locked: " + e.Reason
}

// Unwrap returns the cause.
func (e *LockedError) Unwrap() error { return e.Err }

// Is reports whether target is ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// locked builds a *LockedError.
func locked(err error, format string, args ...any) *LockedError {
	return &LockedError{Reason: fmt.Sprintf(format, args...), Err: err}
}

// NotFoundError says which secret is missing. It matches ErrNotFound.
type NotFoundError struct {
	// Name is the secret asked for.
	Name string
}

// Error returns "vault: no secret NAME".
func (e *NotFoundError) Error() string { return "vault: no secret " + e.Name }

// Is reports whether target is ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }
