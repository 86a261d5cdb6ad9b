package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"buddi/core/vault"
)

// testSecrets are the secrets most tests plant.
var testSecrets = map[string]string{
	"API_KEY":   "sk-live-0123456789abcdef",
	"BOT_TOKEN": "123456789:AAH+bot/token=xyz",
	"MAIL_PASS": `pä"ss\wörd <&> /x 🔑`,
	"PIN":       "12345678",
	"SHORT":     "ab1_",
}

func b64core(enc *base64.Encoding, s string) string { return enc.EncodeToString([]byte(s)) }

func goJSON(s string, html bool) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(html)
	if err := e.Encode(s); err != nil {
		panic(err)
	}
	out := strings.TrimSpace(b.String())
	return out[1 : len(out)-1]
}

func TestEncodings(t *testing.T) {
	t.Parallel()
	r := New(testSecrets)
	for name, value := range testSecrets {
		if name == "SHORT" {
			continue
		}
		tests := []struct {
			encoding string
			form     string
		}{
			{"raw", value},
			{"base64 std", b64core(base64.StdEncoding, value)},
			{"base64 std raw", b64core(base64.RawStdEncoding, value)},
			{"base64 url", b64core(base64.URLEncoding, value)},
			{"base64 url raw", b64core(base64.RawURLEncoding, value)},
			{"basic auth", b64core(base64.StdEncoding, "alice:"+value)},
			{"basic auth, longer user", b64core(base64.StdEncoding, "alice.b:"+value)},
			{"basic auth, user of 3n+1", b64core(base64.StdEncoding, "bob:"+value)},
			{"base64 inside a blob", b64core(base64.StdEncoding, `{"id":7,"tok":"`+value+`","n":1}`)},
			{"hex", hex.EncodeToString([]byte(value))},
			{"HEX", strings.ToUpper(hex.EncodeToString([]byte(value)))},
			{"query escape", url.QueryEscape(value)},
			{"path escape", url.PathEscape(value)},
			{"query escape, lower-case hex", lowerPercent(url.QueryEscape(value))},
			{"encodeURIComponent", escapeExcept(value, "-_.!~*'()")},
			{"json", goJSON(value, false)},
			{"json, html-escaped", goJSON(value, true)},
			{"json, ascii", jsonEscape(value, jsonStyle{ascii: true})},
			{"json, ASCII", jsonEscape(value, jsonStyle{ascii: true, upper: true})},
			{"json, escaped slash", strings.ReplaceAll(goJSON(value, false), "/", `\/`)},
		}
		for _, tt := range tests {
			text := "before " + tt.form + " after"
			got := r.String(text)
			if strings.Contains(got, tt.form) {
				t.Errorf("%s, %s: %q is still in %q", name, tt.encoding, tt.form, got)
			}
			if !strings.Contains(got, Token(name)) {
				t.Errorf("%s, %s: no %s in %q", name, tt.encoding, Token(name), got)
			}
			if !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
				t.Errorf("%s, %s: the surrounding text changed: %q", name, tt.encoding, got)
			}
			if b := r.Bytes([]byte(text)); string(b) != got {
				t.Errorf("%s, %s: Bytes gave %q, String %q", name, tt.encoding, b, got)
			}
		}
	}
}

func TestBasicAuthHeader(t *testing.T) {
	t.Parallel()
	r := New(testSecrets)
	for _, user := range []string{"a", "ab", "abc", "owner@example.com"} {
		header := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+testSecrets["API_KEY"]))
		got := r.String(header)
		// Every base64 character that carries a bit of the value is gone: what is left of
		// the token decodes to the user and the colon, at most.
		left, _, ok := strings.Cut(strings.TrimPrefix(got, "Authorization: Basic "), Token("API_KEY"))
		if !ok {
			t.Fatalf("user %q: got %q", user, got)
		}
		if len(left) > (len(user)+1)*4/3+1 {
			t.Errorf("user %q: %q kept before the token, more than the user's part", user, left)
		}
	}
}

func TestOverlapping(t *testing.T) {
	t.Parallel()
	r := New(map[string]string{
		"LONG":  "sk-live-0123456789",
		"INNER": "0123456789",
		"LEFT":  "abcdefgh1234",
		"RIGHT": "1234ijklmnop",
		"SAME1": "shared-value-99",
		"SAME2": "shared-value-99",
	})
	tests := []struct {
		name, in, want string
	}{
		{"inner value inside a longer one", "key=sk-live-0123456789;", "key=‹secret:LONG›;"},
		{"inner value alone", "n=0123456789", "n=‹secret:INNER›"},
		{"two values overlapping", "x abcdefgh1234ijklmnop y", "x ‹secret:LEFT›‹secret:RIGHT› y"},
		{"adjacent values", "abcdefgh12341234ijklmnop", "‹secret:LEFT›‹secret:RIGHT›"},
		{"one value under two names", "v=shared-value-99", "v=‹secret:SAME1›"},
		{"repeated", "0123456789 0123456789", "‹secret:INNER› ‹secret:INNER›"},
	}
	for _, tt := range tests {
		if got := r.String(tt.in); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestShortValuesLeftAlone(t *testing.T) {
	t.Parallel()
	r := New(map[string]string{"SHORT": "ab1_", "FIVE": "héllo", "SIX": "héllo!"})
	if got := r.String("ab1_ héllo and héllo!"); got != "ab1_ héllo and ‹secret:SIX›" {
		t.Errorf("got %q", got)
	}
	if got, want := r.Skipped(), []string{"FIVE", "SHORT"}; !slices.Equal(got, want) {
		t.Errorf("Skipped = %v, want %v", got, want)
	}
	if got, want := r.Names(), []string{"SIX"}; !slices.Equal(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
}

func TestNoSecret(t *testing.T) { // not parallel: AllocsPerRun
	r := New(testSecrets)
	text := strings.Repeat("nothing to see here, sk-live- 1234567 ", 50)
	if got := r.String(text); got != text {
		t.Errorf("changed a text without a secret: %q", got)
	}
	b := []byte(text)
	if got := r.Bytes(b); &got[0] != &b[0] {
		t.Error("Bytes copied a text without a secret")
	}
	if n := testing.AllocsPerRun(20, func() { r.String(text) }); n != 0 {
		t.Errorf("String allocated %v times on a text without a secret", n)
	}
	var nilR *Redactor
	if nilR.String("sk-live-0123456789abcdef") != "sk-live-0123456789abcdef" || New(nil).String("x") != "x" {
		t.Error("an empty redactor changed text")
	}
}

func TestURLQuery(t *testing.T) {
	t.Parallel()
	r := New(testSecrets)
	q := url.Values{"token": {testSecrets["BOT_TOKEN"]}, "key": {testSecrets["MAIL_PASS"]}, "q": {"hello"}}
	u := "https://api.example.com/v1/x?" + q.Encode()
	got := r.String(u)
	want := "https://api.example.com/v1/x?key=‹secret:MAIL_PASS›&q=hello&token=‹secret:BOT_TOKEN›"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	path := "https://api.telegram.org/bot" + url.PathEscape(testSecrets["BOT_TOKEN"]) + "/getUpdates"
	if got := r.String(path); got != "https://api.telegram.org/bot‹secret:BOT_TOKEN›/getUpdates" {
		t.Errorf("got %q", got)
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	r := New(testSecrets)
	value := testSecrets["MAIL_PASS"]
	doc := map[string]any{
		"model": "claude",
		"messages": []any{
			map[string]any{"role": "tool", "content": "the password is " + value + "."},
			map[string]any{"nested": map[string]any{"deep": []any{testSecrets["API_KEY"], 1, true, nil}}},
		},
		testSecrets["API_KEY"]: "a secret as a key",
		"pin":                  12345678,
		"safe":                 "π ≈ 3.14159 <ok>",
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	// The same document as Python writes it: every non-ASCII character escaped.
	ascii := []byte(jsonEscapeDoc(string(raw)))
	for _, in := range [][]byte{raw, ascii} {
		got := r.JSON(in)
		if !json.Valid(got) {
			t.Fatalf("invalid JSON out: %s", got)
		}
		var back map[string]any
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		flat, _ := json.Marshal(back)
		for _, secret := range []string{value, testSecrets["API_KEY"], "12345678"} {
			if strings.Contains(string(flat), secret) || strings.Contains(string(got), secret) {
				t.Errorf("%q survived in %s", secret, got)
			}
		}
		msgs := back["messages"].([]any)
		if c := msgs[0].(map[string]any)["content"]; c != "the password is ‹secret:MAIL_PASS›." {
			t.Errorf("content = %q", c)
		}
		if back["pin"] != "‹secret:PIN›" || back["‹secret:API_KEY›"] != "a secret as a key" || back["safe"] != "π ≈ 3.14159 <ok>" {
			t.Errorf("got %s", got)
		}
	}
	clean := []byte(`{"a": [1, 2.5e3, "x\"y", {"b": null}]}`)
	if got := r.JSON(clean); &got[0] != &clean[0] {
		t.Errorf("a document without a secret was copied: %s", got)
	}
	broken := []byte(`{"a": "` + testSecrets["API_KEY"] + `"`)
	if got := r.JSON(broken); string(got) != `{"a": "‹secret:API_KEY›"` {
		t.Errorf("invalid JSON is not redacted as text: %s", got)
	}
}

// jsonEscapeDoc re-escapes every non-ASCII character of a JSON document as \uXXXX.
func jsonEscapeDoc(doc string) string {
	var b strings.Builder
	for _, c := range doc {
		if c < 0x80 {
			b.WriteRune(c)
			continue
		}
		b.WriteString(jsonEscape(string(c), jsonStyle{ascii: true}))
	}
	return b.String()
}

func TestLive(t *testing.T) {
	t.Parallel()
	v := vault.NewMemory(nil)
	l := NewLive(v)
	if got := l.String("sk-live-0123456789"); got != "sk-live-0123456789" {
		t.Errorf("before Reload: %q", got)
	}
	if err := v.Set("API_KEY", "sk-live-0123456789"); err != nil {
		t.Fatal(err)
	}
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := l.String("k=sk-live-0123456789"); got != "k=‹secret:API_KEY›" {
		t.Errorf("got %q", got)
	}
	v.Lock("no key")
	if err := l.Reload(); err == nil {
		t.Error("Reload of a locked vault succeeded")
	}
	if got := string(l.Bytes([]byte("sk-live-0123456789"))); got != "‹secret:API_KEY›" {
		t.Errorf("a failed Reload dropped the redactor: %q", got)
	}
	if got := string(l.JSON([]byte(`["sk-live-0123456789"]`))); got != `["‹secret:API_KEY›"]` {
		t.Errorf("got %s", got)
	}
}

func TestLiveConcurrent(t *testing.T) {
	t.Parallel()
	v := vault.NewMemory(map[string]string{"API_KEY": "sk-live-0123456789"})
	l := NewLive(v)
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for range 200 {
				if got := l.String("k=sk-live-0123456789"); got != "k=‹secret:API_KEY›" {
					t.Errorf("reader %d: got %q", i, got)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for j := range 50 {
			if err := v.Set(fmt.Sprintf("OTHER_%d", j), fmt.Sprintf("other-value-%d", j)); err != nil {
				t.Error(err)
			}
			if err := l.Reload(); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	if got := l.String("other-value-49"); got != "‹secret:OTHER_49›" {
		t.Errorf("after the last reload: %q", got)
	}
}

// escapeExcept percent-escapes every byte of s except ASCII letters, digits and keep.
func escapeExcept(s, keep string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
