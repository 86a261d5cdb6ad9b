package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// oracleForms returns the encoded forms of value that must never survive redaction, each
// computed with the standard library rather than with this package's encoders.
func oracleForms(value, user string) []string {
	b := []byte(value)
	goJSON := func(html bool) string {
		var sb strings.Builder
		e := json.NewEncoder(&sb)
		e.SetEscapeHTML(html)
		e.Encode(value)
		s := strings.TrimSpace(sb.String())
		return s[1 : len(s)-1]
	}
	return []string{
		value,
		base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
		base64.StdEncoding.EncodeToString([]byte(user + ":" + value)),
		hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b)),
		url.QueryEscape(value), url.PathEscape(value),
		goJSON(true), goJSON(false),
	}
}

var tokenRE = regexp.MustCompile(`‹secret:[A-Z0-9_]+›`)

// clip makes a fuzzed string a plausible secret: valid UTF-8, at most 48 bytes.
func clip(s string) string {
	if len(s) > 48 {
		s = s[:48]
	}
	return strings.ToValidUTF8(s, "")
}

// FuzzRedact plants two fuzzed secrets, each in a fuzzed encoding, at fuzzed places in
// fuzzed text. Redact must never panic, String and Bytes must agree, and no piece of the
// output between two tokens may hold any encoded form of a secret of MinLength or more.
func FuzzRedact(f *testing.F) {
	f.Add("plain text around it", "sk-live-0123456789", `pä"ss/wörd <&>`, uint64(0), "alice")
	f.Add("", "AAAAAAAAAAAAA", "AAAAAAAAB", uint64(0x0123456789abcdef), "")
	f.Add("Authorization: Basic ", "hunter2-hunter2", "hunter", uint64(5<<8|5), "bob")
	f.Add(`{"k":"`, "line\u2028sep\u2029x", "12345678", uint64(9<<8|10), "u")
	f.Add("x", "aaaaaa", "aaaaaaa", uint64(0xffffffffffffffff), "ab")
	f.Fuzz(func(t *testing.T, text, v1, v2 string, choice uint64, user string) {
		secrets := map[string]string{"S_ONE": clip(v1), "S_TWO": clip(v2)}
		user = clip(user)
		if strings.Contains(user, ":") {
			user = strings.ReplaceAll(user, ":", "")
		}
		var planted strings.Builder
		rest := text
		next := func() uint64 { c := choice & 0xff; choice = choice>>8 | c<<56; return c }
		for _, name := range []string{"S_ONE", "S_TWO", "S_ONE"} {
			cut := int(next()) % (len(rest) + 1)
			planted.WriteString(rest[:cut])
			rest = rest[cut:]
			forms := oracleForms(secrets[name], user)
			planted.WriteString(forms[int(next())%len(forms)])
		}
		planted.WriteString(rest)
		in := planted.String()

		r := New(secrets)
		out := r.String(in)
		if b := r.Bytes([]byte(in)); string(b) != out {
			t.Fatalf("Bytes and String disagree:\n%q\n%q", b, out)
		}
		for _, piece := range tokenRE.Split(out, -1) {
			for name, value := range secrets {
				if utf8.RuneCountInString(value) < MinLength {
					continue
				}
				for i, form := range oracleForms(value, user) {
					if strings.Contains(piece, form) {
						t.Fatalf("form %d of %s (%q) survived in %q\n(input %q)", i, name, form, out, in)
					}
				}
			}
		}
		doc, err := json.Marshal(map[string]string{"text": in})
		if err != nil {
			t.Fatal(err)
		}
		got := r.JSON(doc)
		var back map[string]string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("JSON made invalid JSON: %v\n%s", err, got)
		}
		for _, piece := range tokenRE.Split(back["text"], -1) {
			for _, value := range secrets {
				if utf8.RuneCountInString(value) >= MinLength && strings.Contains(piece, value) {
					t.Fatalf("%q survived JSON: %s", value, got)
				}
			}
		}
	})
}
