package redact

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// form is one encoded form of a secret value to look for.
type form struct {
	text string
	// alpha is the alphabet of a base64 core, whose neighbouring characters may carry bits
	// of the value; nil for every other form.
	alpha *[256]bool
	// extLeft and extRight: the character before (after) a base64 core mixes the value's
	// first (last) bits with its neighbour's, and is taken with the match.
	extLeft, extRight bool
}

var (
	stdAlphabet = alphabet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
	urlAlphabet = alphabet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
)

// alphabet returns a base64 alphabet as a membership table indexed by byte.
func alphabet(chars string) *[256]bool {
	var a [256]bool
	for i := 0; i < len(chars); i++ {
		a[chars[i]] = true
	}
	return &a
}

// forms returns the encoded forms of value looked for in the text itself, the raw value
// first, without duplicates. Escapes in any mix and case (JSON, percent), hex in any case or
// spacing, and wrapped lines are decoded by the views instead (view.go).
func forms(value string) []form {
	seen := map[string]bool{}
	var out []form
	add := func(f form) {
		if len(f.text) < keyLen || seen[f.text] {
			return
		}
		seen[f.text] = true
		out = append(out, f)
	}
	add(form{text: value})
	// The query form of a space is "+", which the percent view keeps as it is.
	q := url.QueryEscape(value)
	add(form{text: q})
	add(form{text: lowerPercent(q)})
	h := hex.EncodeToString([]byte(value))
	add(form{text: h})
	add(form{text: strings.ToUpper(h)})
	for _, f := range base64Cores(value) {
		add(f)
	}
	return out
}

// base64Cores returns, for each byte alignment k of the value inside a base64 text and each
// alphabet, the characters that encode nothing but the value's bits. Encoding k zero bytes,
// the value and two more zero bytes, the characters fully inside the value's bits
// [8k, 8(k+n)) are those from ceil(8k/6) to floor(8(k+n)/6).
func base64Cores(value string) []form {
	n := len(value)
	var out []form
	for k := 0; k < 3; k++ {
		buf := make([]byte, k+n+2)
		copy(buf[k:], value)
		start, end := (8*k+5)/6, 8*(k+n)/6
		for _, enc := range []struct {
			e *base64.Encoding
			a *[256]bool
		}{{base64.StdEncoding, stdAlphabet}, {base64.URLEncoding, urlAlphabet}} {
			core := enc.e.EncodeToString(buf)[start:end]
			out = append(out, form{text: core, alpha: enc.a, extLeft: (8*k)%6 != 0, extRight: (8*(k+n))%6 != 0})
		}
	}
	return out
}

// lowerPercent lower-cases the hex digits of every %XX in s.
func lowerPercent(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerHex(b[i+1]), lowerHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lowerHex(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// jsonStyle is one way a JSON encoder escapes a string.
type jsonStyle struct {
	ascii bool // non-ASCII as \uXXXX (Python's ensure_ascii)
	upper bool // \uXXXX with upper-case hex
	html  bool // <, >, & as \u003c, \u003e, \u0026 (Go's default)
	slash bool // / as \/ (PHP)
	sep   bool // U+2028 and U+2029 as \u2028, \u2029 (Go, always)
}

// jsonEscape returns s escaped for the inside of a JSON string in style st. Invalid UTF-8 is
// kept as it is (a vault value is always valid).
func jsonEscape(s string, st jsonStyle) string {
	const lower, upper = "0123456789abcdef", "0123456789ABCDEF"
	digits := lower
	if st.upper {
		digits = upper
	}
	var b strings.Builder
	u := func(r rune) {
		b.WriteString(`\u`)
		b.WriteByte(digits[r>>12&0xf])
		b.WriteByte(digits[r>>8&0xf])
		b.WriteByte(digits[r>>4&0xf])
		b.WriteByte(digits[r&0xf])
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteByte(s[i])
			i++
			continue
		}
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			u(r)
		case st.html && (r == '<' || r == '>' || r == '&'):
			u(r)
		case st.slash && r == '/':
			b.WriteString(`\/`)
		case (st.sep || st.ascii) && (r == '\u2028' || r == '\u2029'):
			u(r)
		case st.ascii && r >= 0x80:
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				u(r1)
				u(r2)
			} else {
				u(r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
