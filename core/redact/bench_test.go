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

// BenchmarkStreamedReply redacts a model's reply as it streams: 16 KiB of prose, with a few
// secrets planted, in deltas of 1 to 24 bytes (a token or a few). per-delta is what the
// runner did before (each delta redacted alone, which misses a value split over two);
// stream is the Stream that replaces it. Both report the cost per reply.
func BenchmarkStreamedReply(b *testing.B) {
	secrets, log := benchInput(true)
	rng := rand.New(rand.NewPCG(5, 6))
	words := strings.Fields(log)
	var sb strings.Builder
	for sb.Len() < 16<<10 {
		w := words[rng.IntN(len(words))]
		if strings.HasPrefix(w, "time=") || strings.HasPrefix(w, "level=") {
			continue
		}
		sb.WriteString(w + " ")
		if rng.IntN(12) == 0 {
			sb.WriteString("\n\n")
		}
	}
	reply := sb.String()
	var deltas []string
	for rest := reply; rest != ""; {
		n := min(len(rest), 1+rng.IntN(24))
		deltas = append(deltas, rest[:n])
		rest = rest[n:]
	}
	r := New(secrets)
	if got := strings.Join(streamed(r, reply, nil), ""); got != r.String(reply) || got == reply {
		b.Fatal("the reply is not redacted the same way streamed")
	}
	b.Run("per-delta", func(b *testing.B) {
		b.SetBytes(int64(len(reply)))
		b.ReportAllocs()
		for b.Loop() {
			for _, d := range deltas {
				_ = r.String(d)
			}
		}
	})
	b.Run("stream", func(b *testing.B) {
		b.SetBytes(int64(len(reply)))
		b.ReportAllocs()
		for b.Loop() {
			s := NewStream(r)
			for _, d := range deltas {
				_ = s.Write(d)
			}
			_ = s.Flush()
		}
	})
}
