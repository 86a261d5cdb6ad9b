// Package text holds the few small string helpers that several packages share when they write
// sentences for the owner or read identifiers: a first line, a plural, a UUID's shape.
package text

import "strings"

// FirstLine is s up to its first line break.
func FirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Plural is word with an "s" unless n is 1.
func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// ValidUUID reports whether s is a UUID in its canonical 8-4-4-4-12 hex form, so a malformed
// id is answered as unknown before it reaches the database.
func ValidUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
