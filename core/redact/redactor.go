package redact

import (
	"cmp"
	"maps"
	"math"
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

// kind says what a pattern is, so that a view looks only for what can appear in it.
type kind uint8

const (
	kindRaw  kind = 1 << iota // the value as stored
	kindForm                  // an encoded form: base64, hex, URL escaping
	kindText                  // the value, when it is valid UTF-8 (so it never holds 0xFF)
	kindAll  = kindRaw | kindForm | kindText
)

// pattern is one form of one secret, compiled.
type pattern struct {
	form
	kind kind
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
	// prefixes[n-1] holds, for the first n bytes (n < keyLen) of every pattern, the kinds
	// of the patterns that begin so: what a stream must hold back at its very end.
	prefixes [keyLen - 1]map[uint32]kind
	maxLen   int // the longest pattern, in bytes
}

// New compiles a Redactor for secrets (name → value). Values shorter than MinLength
// characters are skipped. When two names share a value, the first name in sorted order is
// the one shown.
func New(secrets map[string]string) *Redactor {
	r := &Redactor{table: map[uint32][]int32{}}
	for i := range r.prefixes {
		r.prefixes[i] = map[uint32]kind{}
	}
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
		for i, f := range forms(value) {
			if seen[f.text] {
				continue
			}
			seen[f.text] = true
			k := kindForm
			if i == 0 { // the raw value comes first
				k = kindRaw
				if utf8.ValidString(value) {
					k |= kindText
				}
			}
			r.patterns = append(r.patterns, pattern{form: f, kind: k, name: idx})
		}
	}
	for i, p := range r.patterns {
		k := key(p.text, 0)
		r.table[k] = append(r.table[k], int32(i))
		h := hash(k)
		r.filter[h/64] |= 1 << (h % 64)
		for n := 1; n < keyLen; n++ {
			r.prefixes[n-1][packed(p.text[:n])] |= p.kind
		}
		r.maxLen = max(r.maxLen, len(p.text))
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

// empty reports whether r redacts nothing.
func (r *Redactor) empty() bool { return r == nil || len(r.patterns) == 0 }

// key reads keyLen bytes of s at i as a little-endian number.
func key(s string, i int) uint32 {
	_ = s[i+3]
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

// packed reads the fewer than keyLen bytes of s as a number.
func packed(s string) uint32 {
	var k uint32
	for i := len(s) - 1; i >= 0; i-- {
		k = k<<8 | uint32(s[i])
	}
	return k
}

// hash maps a key to a filter bit.
func hash(k uint32) uint32 { return (k * 0x9E3779B1) >> 16 }

// match is one occurrence of a pattern, in text offsets.
type match struct {
	start, end, name int
	// open: the match reaches the end of its view and could take one more character
	// (a base64 core's last, shared character) once more text arrives.
	open bool
}

// span is a range of text to replace and the secrets it held, in order.
type span struct {
	start, end int
	names      []int
}

// scan appends to ms every match of the patterns of kind mask in v, a view of the text
// (nil at: v is the text itself, starting at text offset base).
func (r *Redactor) scan(v string, at *view, base int, mask kind, ms []match) []match {
	for i := 0; i+keyLen <= len(v); i++ {
		k := key(v, i)
		h := hash(k)
		if r.filter[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		found := false
		for _, pi := range r.table[k] {
			p := &r.patterns[pi]
			if p.kind&mask == 0 {
				continue
			}
			if found && (p.alpha == nil || !p.extLeft) {
				continue // a shorter match at i is inside the longest, unless it reaches left
			}
			if !strings.HasPrefix(v[i:], p.text) {
				continue
			}
			found = true
			start, end := i, i+len(p.text)
			open := false
			if p.alpha != nil {
				if p.extLeft && start > 0 && p.alpha[v[start-1]] {
					start--
				}
				if p.extRight {
					if end < len(v) && p.alpha[v[end]] {
						end++
					} else if end == len(v) {
						open = true
					}
				}
			}
			m := match{start: base + start, end: base + end, name: p.name, open: open}
			if at != nil {
				m.start, m.end = int(at.start[start]), int(at.end[end-1])
			}
			ms = append(ms, m)
		}
	}
	return ms
}

// merge sorts matches into disjoint spans: overlapping matches become one span naming each
// secret once; a match inside another is dropped.
func merge(ms []match) []span {
	// A left-extended base64 match can start one byte before the match found before it, and
	// views add theirs after the text's own.
	slices.SortStableFunc(ms, func(a, b match) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return cmp.Compare(b.end, a.end)
	})
	var spans []span
	for _, m := range ms {
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

// find returns the spans of s to replace, sorted and disjoint, or nil.
func (r *Redactor) find(s string) []span {
	if r.empty() {
		return nil
	}
	ms := r.scan(s, nil, 0, kindAll, nil)
	for _, vk := range viewKinds {
		if len(s) > math.MaxInt32 || !vk.needed(s) { // views keep 32-bit offsets
			continue // the view would be the text itself, or find nothing the text scan misses
		}
		ms = r.scanViews(s, vk, ms)
	}
	if ms == nil {
		return nil
	}
	return merge(ms)
}

// scanViews decodes all of s into the views of vk, adding their matches to ms. Each view is
// scanned a segment at a time, so that what it keeps stays small.
func (r *Redactor) scanViews(s string, vk viewKind, ms []match) []match {
	views := r.newViews(vk)
	for i := range views {
		views[i].segment = func(v *view) { ms = r.scan(v.string(), v, 0, vk.mask, ms) }
	}
	vk.decoder().decode(s, 0, views, true)
	for i := range views {
		if !views[i].mirror {
			ms = r.scan(views[i].string(), &views[i], 0, vk.mask, ms)
		}
	}
	return ms
}

// newViews returns the empty views of a view kind.
func (r *Redactor) newViews(vk viewKind) []view {
	views := make([]view, vk.outputs)
	for i := range views {
		views[i] = newView(vk.mirrors, r.maxLen+1)
	}
	return views
}

// replace writes s (which begins at text offset base) with spans replaced by tokens into b.
func (r *Redactor) replace(b []byte, s string, base int, spans []span) []byte {
	last := 0
	for _, sp := range spans {
		b = append(b, s[last:sp.start-base]...)
		for _, n := range sp.names {
			b = append(b, r.tokens[n]...)
		}
		last = sp.end - base
	}
	return append(b, s[last:]...)
}

// String returns s with every secret replaced; s itself when there is none.
func (r *Redactor) String(s string) string {
	spans := r.find(s)
	if spans == nil {
		return s
	}
	b := r.replace(make([]byte, 0, len(s)+32*len(spans)), s, 0, spans)
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
	return r.replace(make([]byte, 0, len(b)+32*len(spans)), s, 0, spans)
}

// Current returns r: a Redactor does not change.
func (r *Redactor) Current() *Redactor { return r }

// Stream returns a streaming redactor over r.
func (r *Redactor) Stream() *Stream { return NewStream(r) }
