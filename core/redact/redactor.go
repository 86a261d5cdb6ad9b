package redact

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// MinLength is the shortest value, in characters, that is redacted. Shorter values would
// match ordinary words and numbers too often; Skipped lists them.
const MinLength = 6

// keyLen is how many leading bytes of a pattern key the table; every form is longer.
const keyLen = 4

// filterBits is the size of the filter in front of the table.
const filterBits = 1 << 16

// Token returns the text a secret's value is replaced with: ‹secret:NAME›.
func Token(name string) string { return "‹secret:" + name + "›" }

// pattern is one form of one secret, compiled.
type pattern struct {
	form
	name int // index into Redactor.names
}

// Redactor replaces secret values and their encodings in text. It is immutable and safe for
// concurrent use; a nil *Redactor redacts nothing.
type Redactor struct {
	names    []string
	tokens   []string // Token(names[i])
	skipped  []string
	patterns []pattern
	filter   [filterBits / 64]uint64
	table    map[uint32][]int32 // first keyLen bytes → patterns, longest first
}

// New compiles a Redactor for secrets (name → value). Values shorter than MinLength
// characters are skipped. When two names share a value, the first name in sorted order is
// the one shown.
func New(secrets map[string]string) *Redactor {
	r := &Redactor{table: map[uint32][]int32{}}
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(secrets)) {
		value := secrets[name]
		if utf8.RuneCountInString(value) < MinLength {
			r.skipped = append(r.skipped, name)
			continue
		}
		idx := len(r.names)
		r.names = append(r.names, name)
		r.tokens = append(r.tokens, Token(name))
		for _, f := range forms(value) {
			if seen[f.text] {
				continue
			}
			seen[f.text] = true
			r.patterns = append(r.patterns, pattern{form: f, name: idx})
		}
	}
	for i, p := range r.patterns {
		k := key(p.text, 0)
		r.table[k] = append(r.table[k], int32(i))
		h := hash(k)
		r.filter[h/64] |= 1 << (h % 64)
	}
	for k, list := range r.table {
		slices.SortFunc(list, func(a, b int32) int {
			return cmp.Compare(len(r.patterns[b].text), len(r.patterns[a].text))
		})
		r.table[k] = list
	}
	return r
}

// Names returns the names whose values are redacted, sorted.
func (r *Redactor) Names() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.names)
}

// Skipped returns the names whose values are too short to redact, sorted.
func (r *Redactor) Skipped() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.skipped)
}

// key reads keyLen bytes of s at i as a little-endian number.
func key(s string, i int) uint32 {
	_ = s[i+3]
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

// hash maps a key to a filter bit.
func hash(k uint32) uint32 { return (k * 0x9E3779B1) >> 16 }

// span is a range of text to replace and the secrets it held, in order.
type span struct {
	start, end int
	names      []int
}

// find returns the spans of s to replace, sorted and disjoint, or nil.
func (r *Redactor) find(s string) []span {
	if r == nil || len(r.patterns) == 0 {
		return nil
	}
	type match struct{ start, end, name int }
	var matches []match
	for i := 0; i+keyLen <= len(s); i++ {
		k := key(s, i)
		h := hash(k)
		if r.filter[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		found := false
		for _, pi := range r.table[k] {
			p := &r.patterns[pi]
			if found && (p.alpha == nil || !p.extLeft) {
				continue // a shorter match at i is inside the longest, unless it reaches left
			}
			if !strings.HasPrefix(s[i:], p.text) {
				continue
			}
			found = true
			start, end := i, i+len(p.text)
			if p.alpha != nil {
				if p.extLeft && start > 0 && p.alpha[s[start-1]] {
					start--
				}
				if p.extRight && end < len(s) && p.alpha[s[end]] {
					end++
				}
			}
			matches = append(matches, match{start, end, p.name})
		}
	}
	if matches == nil {
		return nil
	}
	// A left-extended base64 match can start one byte before the match found before it.
	slices.SortStableFunc(matches, func(a, b match) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return cmp.Compare(b.end, a.end)
	})
	var spans []span
	for _, m := range matches {
		if n := len(spans); n > 0 && m.start < spans[n-1].end {
			last := &spans[n-1]
			if m.end <= last.end {
				continue // inside what is already replaced
			}
			last.end = m.end
			if !slices.Contains(last.names, m.name) {
				last.names = append(last.names, m.name)
			}
			continue
		}
		spans = append(spans, span{start: m.start, end: m.end, names: []int{m.name}})
	}
	return spans
}

// replace writes s with spans replaced by tokens into b.
func (r *Redactor) replace(b []byte, s string, spans []span) []byte {
	last := 0
	for _, sp := range spans {
		b = append(b, s[last:sp.start]...)
		for _, n := range sp.names {
			b = append(b, r.tokens[n]...)
		}
		last = sp.end
	}
	return append(b, s[last:]...)
}

// String returns s with every secret replaced; s itself when there is none.
func (r *Redactor) String(s string) string {
	spans := r.find(s)
	if spans == nil {
		return s
	}
	b := r.replace(make([]byte, 0, len(s)+32*len(spans)), s, spans)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Bytes returns b with every secret replaced, in a new slice; b itself when there is none.
func (r *Redactor) Bytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	s := unsafe.String(unsafe.SliceData(b), len(b)) // read only, and not kept
	spans := r.find(s)
	if spans == nil {
		return b
	}
	return r.replace(make([]byte, 0, len(b)+32*len(spans)), s, spans)
}
