package redact

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Storable returns s as PostgreSQL can keep it in a text or jsonb column, which refuse the
// NUL character: each NUL byte, and each byte that is not UTF-8, becomes U+FFFD (the
// replacement character, as encoding/json already writes invalid UTF-8). s itself when it
// has neither.
func Storable(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\ufffd"), "\x00", "\ufffd")
}

// StorableJSON returns the JSON document doc as a jsonb column keeps it: each \u0000 escape
// in its strings (what encoding/json writes for a NUL) becomes \ufffd. doc itself when it
// has none.
func StorableJSON(doc []byte) []byte {
	const nul, repl = `\u0000`, `\ufffd`
	if !bytes.Contains(doc, []byte(nul)) {
		return doc
	}
	var out []byte // nil until the first NUL
	last := 0
	for i := 0; i < len(doc); i++ {
		if doc[i] != '\\' {
			continue
		}
		if bytes.HasPrefix(doc[i:], []byte(nul)) {
			out = append(append(out, doc[last:i]...), repl...)
			last = i + len(nul)
		}
		i++ // past the escaped byte: "\\u0000" is a backslash and text
	}
	if out == nil {
		return doc
	}
	return append(out, doc[last:]...)
}
