package redact

import (
	"encoding/base64"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// streamed feeds text to a Stream of r in the pieces cuts makes and returns what came out
// of each Write, and of the Flush last.
func streamed(r *Redactor, text string, cuts []int) []string {
	s := NewStream(r)
	var outs []string
	last := 0
	for _, c := range cuts {
		outs = append(outs, s.Write(text[last:c]))
		last = c
	}
	outs = append(outs, s.Write(text[last:]))
	return append(outs, s.Flush())
}

// randomCuts returns sorted cut points of text: none, every byte, or a random handful.
func randomCuts(rng *rand.Rand, n int) []int {
	var cuts []int
	switch rng.IntN(4) {
	case 0:
		for i := 1; i < n; i++ {
			cuts = append(cuts, i)
		}
	case 1:
	default:
		for i := 1; i < n; i++ {
			if rng.IntN(6) == 0 {
				cuts = append(cuts, i)
			}
		}
	}
	return cuts
}

// checkStream streams text through r cut at cuts: the pieces must add up to the one-shot
// redaction, and no prefix of what came out may hold a secret in any form the one-shot
// redaction removes.
func checkStream(t *testing.T, r *Redactor, secrets map[string]string, text string, cuts []int) {
	t.Helper()
	want := r.String(text)
	outs := streamed(r, text, cuts)
	if got := strings.Join(outs, ""); got != want {
		t.Fatalf("streamed in %d pieces (cut at %v):\n%q\nwant the one-shot redaction\n%q\n(text %q)", len(cuts)+1, cuts, got, want, text)
	}
	var prefix strings.Builder
	for i, o := range outs {
		prefix.WriteString(o)
		if !strings.HasPrefix(want, prefix.String()) {
			t.Fatalf("after piece %d the output %q is not a prefix of %q", i, prefix.String(), want)
		}
	}
	for _, value := range secrets {
		if utf8.RuneCountInString(value) >= MinLength && strings.Contains(text, value) && strings.Contains(want, value) {
			t.Fatalf("the one-shot redaction kept %q: %q", value, want)
		}
	}
}

// TestStreamSplitSecret: a value split over two pieces, or over every byte, never comes out.
func TestStreamSplitSecret(t *testing.T) {
	t.Parallel()
	r := New(testSecrets)
	value := testSecrets["API_KEY"]
	text := "The key is " + value + ", keep it."
	for cut := 1; cut < len(text); cut++ {
		outs := streamed(r, text, []int{cut})
		for _, o := range outs {
			if strings.Contains(o, value[:MinLength]) && strings.Contains(strings.Join(outs, ""), value) {
				t.Fatalf("cut at %d: %q", cut, outs)
			}
		}
		if got := strings.Join(outs, ""); got != "The key is ‹secret:API_KEY›, keep it." {
			t.Fatalf("cut at %d: %q", cut, got)
		}
	}
	every := make([]int, 0, len(text))
	for i := 1; i < len(text); i++ {
		every = append(every, i)
	}
	checkStream(t, r, testSecrets, text, every)
}

// TestStreamHoldsLittle: ordinary text comes out as it arrives, at most a few bytes behind,
// and a piece that begins a secret is held only while it could still be one.
func TestStreamHoldsLittle(t *testing.T) {
	t.Parallel()
	r := New(testSecrets)
	s := NewStream(r)
	text := strings.Repeat("Plain words, nothing secret in them at all. ", 40)
	var out strings.Builder
	for i := 0; i < len(text); i += 7 {
		out.WriteString(s.Write(text[i:min(i+7, len(text))]))
		if behind := min(i+7, len(text)) - out.Len(); behind > 4 {
			t.Fatalf("after %d bytes %d are held back: %q", min(i+7, len(text)), behind, text[out.Len():min(i+7, len(text))])
		}
	}
	out.WriteString(s.Flush())
	if out.String() != text {
		t.Fatalf("got %q", out.String())
	}
	// The start of a value is held; once the text goes elsewhere it comes out.
	if got := s.Write("key sk-live-0123"); strings.Contains(got, "sk-live") {
		t.Fatalf("the start of a value came out: %q", got)
	}
	if got := s.Write("4567 is not it"); !strings.Contains(got, "sk-live-01234567 is") {
		t.Fatalf("a value's prefix was held after it stopped matching: %q", got)
	}
	s.Flush()
}

// TestStreamEncodings streams every encoding the one-shot redaction knows, cut at random.
func TestStreamEncodings(t *testing.T) {
	t.Parallel()
	r := New(testSecrets)
	rng := rand.New(rand.NewPCG(3, 4))
	for name, value := range testSecrets {
		if name == "SHORT" {
			continue
		}
		for _, form := range encodedForms(value, rng) {
			text := "before\n" + form + "after"
			for range 5 {
				checkStream(t, r, testSecrets, text, randomCuts(rng, len(text)))
			}
		}
		for _, form := range oracleForms(value, "alice") {
			text := "x " + form + " y"
			checkStream(t, r, testSecrets, text, randomCuts(rng, len(text)))
		}
	}
}

// FuzzStream plants two fuzzed secrets, each in a fuzzed encoding, in fuzzed text and streams
// it cut at fuzzed places: the pieces add up to the one-shot redaction, every prefix is a
// prefix of it, and neither holds a secret.
func FuzzStream(f *testing.F) {
	f.Add("plain text around it", "sk-live-0123456789", `pä"ss/wörd <&>`, uint64(0), uint64(1))
	f.Add("", "AAAAAAAAAAAAA", "AAAAAAAAB", uint64(0x0123456789abcdef), uint64(7))
	f.Add("Authorization: Basic \n", "hunter2-hunter2", "hunter", uint64(5<<8|5), uint64(99))
	f.Add(`{"k":"\u00`, "line\u2028sep\u2029x", "12345678", uint64(9<<8|10), uint64(3))
	f.Add("00000000: 7368 ", "shared-value-99", "0123456789", uint64(0xffffffffffffffff), uint64(12))
	f.Add("%4", "a%b%c%d%e", "\\u0041\\u0042", uint64(11<<8|12), uint64(5))
	f.Fuzz(func(t *testing.T, text, v1, v2 string, choice, seed uint64) {
		secrets := map[string]string{"S_ONE": clip(v1), "S_TWO": clip(v2)}
		rng := rand.New(rand.NewPCG(seed, choice))
		var planted strings.Builder
		rest := text
		for _, name := range []string{"S_ONE", "S_TWO", "S_ONE"} {
			cut := rng.IntN(len(rest) + 1)
			planted.WriteString(rest[:cut])
			rest = rest[cut:]
			value := secrets[name]
			if utf8.RuneCountInString(value) < MinLength {
				planted.WriteString(value)
				continue
			}
			forms := oracleForms(value, "u")
			encoded := encodedForms(value, rng)
			for _, name := range slices.Sorted(maps.Keys(encoded)) {
				forms = append(forms, encoded[name])
			}
			forms = append(forms, base64.StdEncoding.EncodeToString([]byte(value))[:4]) // a lookalike prefix
			planted.WriteString(forms[rng.IntN(len(forms))])
		}
		planted.WriteString(rest)
		in := planted.String()
		r := New(secrets)
		checkStream(t, r, secrets, in, randomCuts(rng, len(in)))
		for _, piece := range tokenRE.Split(r.String(in), -1) {
			for _, value := range secrets {
				if utf8.RuneCountInString(value) >= MinLength && strings.Contains(piece, value) {
					t.Fatalf("%q survived in %q", value, piece)
				}
			}
		}
	})
}

// TestStreamLongText streams a long text holding every encoding of every value, between
// stretches of ordinary prose longer than any pattern (where the one-shot redaction drops
// what its views kept): streamed and one-shot agree, and no value is left.
func TestStreamLongText(t *testing.T) {
	t.Parallel()
	r := New(testSecrets)
	rng := rand.New(rand.NewPCG(11, 12))
	prose := strings.Repeat("Ordinary words with a café, 12 apples and 3:45 pm; nothing secret here. ", 8)
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(testSecrets)) {
		encoded := encodedForms(testSecrets[name], rng)
		for _, enc := range slices.Sorted(maps.Keys(encoded)) {
			b.WriteString(prose + "\n" + encoded[enc] + "\n")
		}
	}
	text := b.String()
	for range 3 {
		checkStream(t, r, testSecrets, text, randomCuts(rng, len(text)))
	}
	got := r.String(text)
	for name, value := range testSecrets {
		if name != "SHORT" && strings.Contains(got, value) {
			t.Errorf("%s survived", name)
		}
	}
}

// A stream longer than its offsets may count starts counting anew on the way, unseen.
func TestStreamRebases(t *testing.T) {
	t.Parallel()
	r := New(testSecrets)
	rng := rand.New(rand.NewPCG(13, 14))
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(testSecrets)) {
		encoded := encodedForms(testSecrets[name], rng)
		for _, enc := range slices.Sorted(maps.Keys(encoded)) {
			b.WriteString("some words between\n" + encoded[enc] + "\n")
		}
	}
	text := b.String()
	for range 3 {
		s := NewStream(r)
		s.rebase = 40
		var out strings.Builder
		last := 0
		for _, c := range append(randomCuts(rng, len(text)), len(text)) {
			out.WriteString(s.Write(text[last:c]))
			last = c
		}
		out.WriteString(s.Flush())
		if want := r.String(text); out.String() != want {
			t.Fatalf("with rebasing the stream gave\n%q\nwant\n%q", out.String(), want)
		}
	}
}
