package developer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// plural renders n with the singular or plural noun: "1 entry", "3 entries".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// humanBytes renders a size for a person: 512 B, 4.2 KB, 1.3 MB (powers of 1024).
func humanBytes(n int64) string {
	const k = 1024
	switch {
	case n < k:
		return fmt.Sprintf("%d B", n)
	case n < k*k:
		return fmt.Sprintf("%.1f KB", float64(n)/k)
	case n < k*k*k:
		return fmt.Sprintf("%.1f MB", float64(n)/(k*k))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(k*k*k))
}

// cut returns at most max bytes of s, cut at a rune boundary, and whether it cut.
func cut(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}

// contentHash names content for a card and its precondition: "sha256:<hex>", or "absent"
// for a file that does not exist.
func contentHash(content []byte, exists bool) string {
	if !exists {
		return "absent"
	}
	sum := sha256.Sum256(content)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// shortHash is a content hash shortened for a line a person reads.
func shortHash(h string) string {
	if rest, ok := strings.CutPrefix(h, "sha256:"); ok && len(rest) > 12 {
		return "sha256:" + rest[:12] + "…"
	}
	return h
}

// decodeArgs reads a call's arguments, which the registry has validated against the
// tool's schema.
func decodeArgs(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return refusef("The arguments could not be read: %v", err)
	}
	return nil
}

// oneLine folds s onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
