package spawn

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		max     int
		writes  []string
		want    string
		dropped int64
	}{
		{"nothing", 4, nil, "", 0},
		{"under", 4, []string{"ab", "c"}, "abc", 0},
		{"exactly", 4, []string{"ab", "cd"}, "abcd", 0},
		{"over by one write", 4, []string{"ab", "cde"}, "bcde", 1},
		{"one big write", 4, []string{"abcdefg"}, "defg", 3},
		{"wraps many times", 4, []string{"abc", "def", "ghi", "j"}, "ghij", 6},
		{"big write after wrap", 4, []string{"abc", "def", "0123456"}, "3456", 9},
		{"cut rune dropped", 4, []string{"x€yz"}, "yz", 4},
		{"whole rune kept", 4, []string{"xy€"}, "y€", 1},
	}
	for _, tt := range tests {
		b := newTail(tt.max)
		for _, w := range tt.writes {
			if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("%s: Write = %d, %v", tt.name, n, err)
			}
		}
		got, dropped := b.result()
		if got != tt.want || dropped != tt.dropped {
			t.Errorf("%s: got %q dropped %d, want %q dropped %d", tt.name, got, dropped, tt.want, tt.dropped)
		}
	}
}

// TestTailBufferMatchesNaive: random ASCII writes keep exactly the tail of their concatenation.
func TestTailBufferMatchesNaive(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		limit := 1 + r.IntN(64)
		b := newTail(limit)
		var all strings.Builder
		for range r.IntN(40) {
			w := strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(3*limit))
			all.WriteString(w)
			_, _ = b.Write([]byte(w))
		}
		s := all.String()
		want := s[max(0, len(s)-limit):]
		got, dropped := b.result()
		if got != want || dropped != int64(len(s)-len(want)) {
			t.Fatalf("max %d: got %q (dropped %d), want %q", limit, got, dropped, want)
		}
	}
}
