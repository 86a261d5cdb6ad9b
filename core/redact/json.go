package redact

import (
	"bytes"
	"encoding/json"
	"unsafe"
)

// JSON returns the JSON document doc with every secret replaced in every string (keys
// included) and number, keeping everything else byte for byte; doc itself when there is no
// secret. Strings are decoded first, so a value is found however its characters were
// escaped; a number that held a secret becomes a string. A doc that is not valid JSON is
// redacted as plain text, so the result is never less scrubbed than Bytes would make it.
func (r *Redactor) JSON(doc []byte) []byte {
	if r == nil || len(r.patterns) == 0 {
		return doc
	}
	if !json.Valid(doc) {
		return r.Bytes(doc)
	}
	var out []byte // nil until the first change
	last := 0
	emit := func(start, end int, replacement []byte) {
		if out == nil {
			out = make([]byte, 0, len(doc)+64)
		}
		out = append(out, doc[last:start]...)
		out = append(out, replacement...)
		last = end
	}
	for i := 0; i < len(doc); {
		c := doc[i]
		switch {
		case c == '"':
			end := stringEnd(doc, i)
			lit := doc[i:end]
			var s string
			if bytes.IndexByte(lit, '\\') < 0 {
				s = unsafe.String(unsafe.SliceData(lit[1:]), len(lit)-2)
			} else if err := json.Unmarshal(lit, &s); err != nil {
				emit(i, end, r.Bytes(lit)) // cannot happen in a valid document
				i = end
				continue
			}
			if rs := r.String(s); rs != s {
				emit(i, end, quote(rs))
			}
			i = end
		case c == '-' || '0' <= c && c <= '9':
			end := i + 1
			for end < len(doc) && isNumberByte(doc[end]) {
				end++
			}
			num := unsafe.String(unsafe.SliceData(doc[i:end]), end-i)
			if rs := r.String(num); rs != num {
				emit(i, end, quote(rs))
			}
			i = end
		default:
			i++
		}
	}
	if out == nil {
		return doc
	}
	return append(out, doc[last:]...)
}

// stringEnd returns the index just past the string literal starting at doc[i] (a quote).
func stringEnd(doc []byte, i int) int {
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(doc)
}

func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// quote returns s as a JSON string literal.
func quote(s string) []byte {
	return []byte(`"` + jsonEscape(s, jsonStyle{}) + `"`)
}
