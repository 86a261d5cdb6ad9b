package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf16"
)

// wrap breaks s into lines of width characters, each ended by eol.
func wrap(s string, width int, eol string) string {
	var b strings.Builder
	for len(s) > width {
		b.WriteString(s[:width] + eol)
		s = s[width:]
	}
	b.WriteString(s + eol)
	return b.String()
}

// xxd formats data as `xxd` does by default: an eight-digit offset, eight groups of two bytes,
// and the characters (non-printable ones as dots).
func xxd(data []byte) string {
	var b strings.Builder
	for off := 0; off < len(data); off += 16 {
		line := data[off:min(off+16, len(data))]
		fmt.Fprintf(&b, "%08x: ", off)
		hexCol := ""
		for i := 0; i < len(line); i += 2 {
			hexCol += hex.EncodeToString(line[i:min(i+2, len(line))])
			if i+2 < 16 {
				hexCol += " "
			}
		}
		fmt.Fprintf(&b, "%-40s %s\n", hexCol, printable(line))
	}
	return b.String()
}

// hexdumpC formats data as `hexdump -C` does.
func hexdumpC(data []byte) string {
	var b strings.Builder
	for off := 0; off < len(data); off += 16 {
		line := data[off:min(off+16, len(data))]
		fmt.Fprintf(&b, "%08x  ", off)
		for i := range 16 {
			if i < len(line) {
				fmt.Fprintf(&b, "%02x ", line[i])
			} else {
				b.WriteString("   ")
			}
			if i == 7 {
				b.WriteByte(' ')
			}
		}
		fmt.Fprintf(&b, " |%s|\n", printable(line))
	}
	fmt.Fprintf(&b, "%08x\n", len(data))
	return b.String()
}

func printable(line []byte) string {
	out := []byte{}
	for _, c := range line {
		if c < 0x20 || c > 0x7e {
			c = '.'
		}
		out = append(out, c)
	}
	return string(out)
}

// colonHex writes data as colon-separated hex pairs.
func colonHex(data []byte, upper bool) string {
	parts := make([]string, len(data))
	for i, c := range data {
		parts[i] = fmt.Sprintf("%02x", c)
		if upper {
			parts[i] = strings.ToUpper(parts[i])
		}
	}
	return strings.Join(parts, ":")
}

// mixedCase flips the case of every other letter.
func mixedCase(s string) string {
	b := []byte(s)
	for i := range b {
		if i%2 == 0 {
			b[i] = bytes.ToUpper(b[i : i+1])[0]
		}
	}
	return string(b)
}

// uEscapeAll escapes every character of s as \uXXXX (surrogate pairs above U+FFFF).
func uEscapeAll(s string, upper bool) string {
	var b strings.Builder
	for _, r := range s {
		for _, u := range utf16.Encode([]rune{r}) {
			h := fmt.Sprintf(`\u%04x`, u)
			if upper {
				h = `\u` + strings.ToUpper(h[2:])
			}
			b.WriteString(h)
		}
	}
	return b.String()
}

// uEscapeSome escapes every other character as \uXXXX, and "/" as "\/".
func uEscapeSome(s string) string {
	var b strings.Builder
	i := 0
	for _, r := range s {
		switch {
		case r == '/':
			b.WriteString(`\/`)
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case i%2 == 0:
			b.WriteString(uEscapeAll(string(r), i%4 == 0))
		default:
			b.WriteRune(r)
		}
		i++
	}
	return b.String()
}

// percentAll escapes every byte of s as %XX, alternating upper and lower case.
func percentAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		h := fmt.Sprintf("%%%02X", s[i])
		if i%2 == 1 {
			h = strings.ToLower(h)
		}
		b.WriteString(h)
	}
	return b.String()
}

// percentSome escapes every third byte only.
func percentSome(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i%3 == 0 || s[i] == '%' {
			fmt.Fprintf(&b, "%%%02x", s[i])
		} else {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// encodedForms are the encodings the issue names, of value planted in surrounding data, as
// a tool's output would show them.
func encodedForms(value string, rng *rand.Rand) map[string]string {
	pad := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	}
	blob := []byte(pad(rng.IntN(90)) + value + pad(rng.IntN(90)))
	text := []byte("config: token=" + value + "\nend\n")
	std := base64.StdEncoding.EncodeToString(blob)
	return map[string]string{
		"base64 wrapped at 64, \\n":    "-----BEGIN DATA-----\n" + wrap(std, 64, "\n") + "-----END DATA-----\n",
		"base64 wrapped at 76, \\r\\n": wrap(std, 76, "\r\n"),
		"base64 wrapped at 76, \\n":    wrap(base64.StdEncoding.EncodeToString(text), 76, "\n"),
		"base64 wrapped, indented":     "  key: |\n" + strings.ReplaceAll(wrap(std, 64, "\n"), "\n", "\n    "),
		"xxd":                          xxd(blob),
		"xxd of text":                  xxd(text),
		"hexdump -C":                   hexdumpC(blob),
		"colon hex, lower":             colonHex([]byte(value), false),
		"colon hex, upper":             colonHex(blob, true),
		"colon hex, wrapped":           "    " + strings.ReplaceAll(wrap(colonHex(blob, false)+":", 45, "\n"), "\n", "\n    "),
		"space hex":                    strings.ReplaceAll(colonHex([]byte(value), false), ":", " "),
		"hex, mixed case":              mixedCase(hex.EncodeToString(blob)),
		"hex, odd alignment":           "0x" + hex.EncodeToString([]byte(value)) + "f",
		"\\u every character":          uEscapeAll(value, false),
		"\\u every character, upper":   uEscapeAll(value, true),
		"\\u mixed with plain":         uEscapeSome(value),
		"percent, every byte":          percentAll(value),
		"percent, some bytes":          percentSome(value),
	}
}

// TestMoreEncodings plants each value of testSecrets in each of the encodings the issue
// names: none may survive, and the text around stays.
func TestMoreEncodings(t *testing.T) {
	t.Parallel()
	r := New(testSecrets)
	rng := rand.New(rand.NewPCG(7, 8))
	for name, value := range testSecrets {
		if name == "SHORT" {
			continue
		}
		for round := range 20 {
			for encoding, form := range encodedForms(value, rng) {
				text := "before\n" + form + "after"
				got := r.String(text)
				if !strings.Contains(got, Token(name)) {
					t.Fatalf("%s, %s (round %d): no %s in\n%s", name, encoding, round, Token(name), got)
				}
				if strings.Contains(got, value) {
					t.Fatalf("%s, %s: the value is still in\n%s", name, encoding, got)
				}
				if !strings.HasPrefix(got, "before\n") || !strings.HasSuffix(got, "after") {
					t.Fatalf("%s, %s: the surrounding text changed:\n%s", name, encoding, got)
				}
				if encoding == "xxd" || encoding == "hexdump -C" || encoding == "xxd of text" {
					checkDumpColumn(t, got, value, name+", "+encoding)
				}
			}
		}
	}
}

// checkDumpColumn fails when the character column of a redacted dump still shows eight or
// more characters of value in a row (counting the line breaks a column is cut by).
func checkDumpColumn(t *testing.T, got, value, what string) {
	t.Helper()
	var col strings.Builder
	for _, line := range strings.Split(got, "\n") {
		if i := strings.Index(line, "  "); i > 0 && len(line) > 50 && !strings.Contains(line, "‹secret") {
			col.WriteString(strings.Trim(line[i+2:], "| "))
		} else {
			col.WriteString("\x00")
		}
	}
	printed := printable([]byte(value))
	for i := 0; i+8 <= len(printed); i++ {
		if strings.Contains(col.String(), printed[i:i+8]) {
			t.Fatalf("%s: the character column still shows %q:\n%s", what, printed[i:i+8], got)
		}
	}
}

// The formats the tests write are those of the real tools, where they are installed.
func TestDumpFormatsMatchTheTools(t *testing.T) {
	t.Parallel()
	data := []byte("sk-live-0123456789abcdef and some more bytes \x00\x01\xff to end on")
	for _, tool := range []struct {
		name string
		args []string
		want string
	}{{"xxd", nil, xxd(data)}, {"hexdump", []string{"-C"}, hexdumpC(data)}} {
		path, err := exec.LookPath(tool.name)
		if err != nil {
			t.Logf("%s is not installed: its format is checked by the table only", tool.name)
			continue
		}
		cmd := exec.Command(path, tool.args...)
		cmd.Stdin = bytes.NewReader(data)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", tool.name, err)
		}
		if string(out) != tool.want {
			t.Errorf("%s prints\n%s\nthe test's formatter\n%s", tool.name, out, tool.want)
		}
	}
}
