package redact

import (
	"math/rand/v2"
	"testing"
)

// hexStretch, which skips, answers as a count over every byte would.
func TestHexStretch(t *testing.T) {
	t.Parallel()
	naive := func(s string) bool {
		digits := 0
		for i := 0; i < len(s); i++ {
			switch hexish[s[i]] {
			case 0:
				digits = 0
			case 1:
				if digits++; digits >= hexMinRun {
					return true
				}
			}
		}
		return false
	}
	rng := rand.New(rand.NewPCG(1, 1))
	const chars = "0123456789abcdefABCDEFxyz :-\n\t\r.g"
	for range 20000 {
		b := make([]byte, rng.IntN(80))
		for i := range b {
			b[i] = chars[rng.IntN(len(chars))]
		}
		if got, want := hexStretch(string(b)), naive(string(b)); got != want {
			t.Fatalf("hexStretch(%q) = %v, want %v", b, got, want)
		}
	}
}
