package vault

import (
	"fmt"
	"regexp"
	"unicode/utf8"
)

// NamePattern is what a secret name must match: an upper-case letter, then up to 63
// upper-case letters, digits and underscores, like TELEGRAM_BOT_TOKEN.
const NamePattern = `^[A-Z][A-Z0-9_]{0,63}$`

// MaxValueLen is the longest value the vault stores, in bytes.
const MaxValueLen = 64 << 10

var nameRE = regexp.MustCompile(NamePattern)

// CheckName returns nil for a valid secret name and an error matching ErrInvalidName
// otherwise.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w %q: a name is an upper-case letter then up to 63 upper-case letters, digits or underscores, like TELEGRAM_BOT_TOKEN", ErrInvalidName, name)
	}
	return nil
}

// checkValue returns nil for a value the vault can store.
func checkValue(name, value string) error {
	switch {
	case value == "":
		return fmt.Errorf("%w for %s: it is empty", ErrInvalidValue, name)
	case len(value) > MaxValueLen:
		return fmt.Errorf("%w for %s: %d bytes, the limit is %d", ErrInvalidValue, name, len(value), MaxValueLen)
	case !utf8.ValidString(value):
		return fmt.Errorf("%w for %s: it is not UTF-8 text (encode binary secrets, e.g. in base64)", ErrInvalidValue, name)
	}
	return nil
}
