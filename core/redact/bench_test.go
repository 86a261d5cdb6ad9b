package redact

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchInput returns 20 secrets and a 64 KiB text of log-like lines, with a secret (raw,
// base64 or URL-escaped) planted in every 32nd line when planted is set.
func benchInput(planted bool) (map[string]string, string) {
	rng := rand.New(rand.NewPCG(1, 2))
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	secrets := map[string]string{}
	var values []string
	for i := range 20 {
		b := make([]byte, 20+rng.IntN(40))
		for j := range b {
			b[j] = chars[rng.IntN(len(chars))]
		}
		secrets[fmt.Sprintf("SECRET_%02d", i)] = string(b)
		values = append(values, string(b))
	}
	words := strings.Fields("the run called tool http.get with arguments url status 200 took ms model claude turn conversation approval gated auto session token usage input output")
	var sb strings.Builder
	for line := 0; sb.Len() < 64<<10; line++ {
		fmt.Fprintf(&sb, "time=2026-11-30T00:00:%02dZ level=INFO msg=\"", line%60)
		for range 12 {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(' ')
		}
		if planted && line%32 == 0 {
			v := values[rng.IntN(len(values))]
			switch line / 32 % 3 {
			case 0:
				sb.WriteString(v)
			case 1:
				sb.WriteString(base64.StdEncoding.EncodeToString([]byte("user:" + v)))
			case 2:
				sb.WriteString("x%2F" + v)
			}
		}
		sb.WriteString("\" service=runtime\n")
	}
	return secrets, sb.String()[:64<<10]
}

// BenchmarkString redacts a 64 KiB text with 20 secrets, some of them present.
func BenchmarkString(b *testing.B) {
	secrets, text := benchInput(true)
	r := New(secrets)
	if r.String(text) == text {
		b.Fatal("nothing planted")
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		r.String(text)
	}
}

// BenchmarkStringClean redacts a 64 KiB text with 20 secrets, none present: the common case.
func BenchmarkStringClean(b *testing.B) {
	secrets, text := benchInput(false)
	r := New(secrets)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		r.String(text)
	}
}

// BenchmarkNew compiles a Redactor for 20 secrets.
func BenchmarkNew(b *testing.B) {
	secrets, _ := benchInput(false)
	b.ReportAllocs()
	for b.Loop() {
		New(secrets)
	}
}
