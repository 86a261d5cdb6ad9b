package redact

import (
	"math"
	"unicode/utf8"
	"unsafe"
)

// Stream redacts a text that arrives in pieces, such as a model's streamed reply. What Write
// returns never holds a secret, not even one split across pieces or across encodings, and
// everything Write and Flush return, joined, is exactly what String returns for the whole
// text. To do so it holds back the end of the text for as long as that end could still
// become part of a secret (the beginning of a value, or of one of its encoded forms, or an
// escape not yet complete), and no longer: ordinary text comes out as it arrives, a
// character or so behind.
//
// A Stream uses the Redactor it was made with from start to end. It is not safe for
// concurrent use.
type Stream struct {
	r       *Redactor
	text    []byte // the text from base on
	base    int    // text offset of text[0]
	emitted int    // text offset up to which Write has returned the text
	// dead[0] is for the text, the others for the views: positions before it cannot begin
	// anything still to come.
	dead  []int
	decs  []decoder
	views [len(viewKinds)][]view
	out   []byte // reused for what cut returns
	// rebase is where offsets are counted anew (rebaseAt; tests lower it).
	rebase int
}

// NewStream returns a Stream redacting with r (nil redacts nothing).
func NewStream(r *Redactor) *Stream {
	s := &Stream{r: r, rebase: rebaseAt}
	s.reset()
	return s
}

func (s *Stream) reset() {
	s.text, s.base, s.emitted = s.text[:0], 0, 0
	if s.r.empty() {
		return
	}
	s.decs = s.decs[:0]
	s.dead = append(s.dead[:0], 0)
	for i, vk := range viewKinds {
		s.decs = append(s.decs, vk.decoder())
		s.views[i] = s.r.newViews(vk)
		for range vk.outputs {
			s.dead = append(s.dead, 0)
		}
	}
}

// Write adds the next piece of the text and returns what can be shown of it now, redacted:
// possibly nothing, possibly the end of an earlier piece.
func (s *Stream) Write(piece string) string {
	if s.r.empty() {
		return piece
	}
	s.text = append(s.text, piece...)
	return s.cut(false)
}

// Flush ends the text, returning the rest of it redacted; the Stream can then start anew.
// Call it when the text is complete, and also when it is cut short (a stream that fails).
func (s *Stream) Flush() string {
	if s.r.empty() {
		return ""
	}
	out := s.cut(true)
	s.reset()
	return out
}

// cut returns the text from s.emitted up to the furthest point that nothing to come can
// change (the end, when final), redacted.
func (s *Stream) cut(final bool) string {
	r := s.r
	t := unsafe.String(unsafe.SliceData(s.text), len(s.text))
	end := s.base + len(t)
	to := end
	ms := r.scan(t, nil, s.base, kindAll, nil)
	if !final {
		to = min(to, s.hold(t, nil, s.base, kindAll, 0))
	}
	d := 1
	for i, vk := range viewKinds {
		dec := s.decs[i]
		dec.decode(t, s.base, s.views[i], final)
		if !final {
			to = min(to, dec.held())
		}
		for j := range s.views[i] {
			v := &s.views[i][j]
			if v.mirror {
				// The text itself, up to what the decoder has not decided on: there the
				// view may go on differently (a line break it drops, an escape).
				s.dead[d] = 0
				if v.next < end && v.next > s.base {
					vs := t[:v.next-s.base]
					ms = r.scan(vs, nil, s.base, vk.mask, ms)
					if !final {
						to = min(to, s.hold(vs, nil, s.base, vk.mask, d))
					}
				}
				s.dead[d] = 0 // in the text's offsets: no use once the view keeps bytes
				d++
				continue
			}
			vs := v.string()
			ms = r.scan(vs, v, 0, vk.mask, ms)
			if !final {
				to = min(to, s.hold(vs, v, 0, vk.mask, d))
			}
			d++
		}
	}
	kept := ms[:0]
	for _, m := range ms {
		if m.start < s.emitted {
			continue // returned whole before (no match reaches over what was returned)
		}
		if m.open && !final {
			to = min(to, m.start)
		}
		kept = append(kept, m)
	}
	spans := merge(kept)
	// Never cut through a span, nor through a character.
	for changed := true; changed; {
		changed = false
		for _, sp := range spans {
			if sp.start < to && to < sp.end {
				to, changed = sp.start, true
			}
		}
		for to > s.emitted && to < end && !utf8.RuneStart(t[to-s.base]) {
			to, changed = to-1, true
		}
	}
	to = max(to, s.emitted)
	n := 0
	for n < len(spans) && spans[n].start < to {
		n++
	}
	s.out = r.replace(s.out[:0], t[s.emitted-s.base:to-s.base], s.emitted, spans[:n])
	out := string(s.out)
	s.emitted = to
	s.trim()
	return out
}

// hold returns the text offset from which the view v (the text itself when at is nil,
// starting at base) must be held back: its earliest position that begins a proper prefix of
// a pattern of kind mask. A base64 core may take the character before it, and may begin at
// the very end, so for those the byte before is held too.
func (s *Stream) hold(v string, at *view, base int, mask kind, d int) int {
	q := s.r.live(v, s.dead[d], mask)
	s.dead[d] = q
	if mask&kindForm != 0 && len(v) > 0 {
		q = max(q-1, 0)
	} else if q == len(v) {
		return math.MaxInt
	}
	if at == nil {
		return base + q
	}
	return int(at.start[q])
}

// rebaseAt is where a stream counts its offsets anew, so that views' 32-bit offsets never
// overflow.
const rebaseAt = 1 << 30

// trim forgets what was returned, keeping one byte (and one byte of each view) before the
// rest: the byte a base64 match may take on its left.
func (s *Stream) trim() {
	defer func() {
		if n := s.base; n > s.rebase {
			s.base, s.emitted = 0, s.emitted-n
			for i, dec := range s.decs {
				dec.shift(n)
				for j := range s.views[i] {
					s.views[i][j].shift(n)
				}
			}
		}
	}()
	keep := s.emitted - 1
	if keep > s.base {
		n := keep - s.base
		s.text = s.text[:copy(s.text, s.text[n:])]
		s.base = keep
		s.dead[0] = max(s.dead[0]-n, 0)
	}
	d := 1
	for i := range s.views {
		for j := range s.views[i] {
			v := &s.views[i][j]
			n := 0
			for n < len(v.end) && int(v.end[n]) <= s.emitted {
				n++
			}
			if n--; n > 0 {
				v.drop(n)
				s.dead[d] = max(s.dead[d]-n, 0)
			}
			if viewKinds[i].mirrors && v.remirror(max(keep, 0)) {
				s.dead[d] = 0
			}
			d++
		}
	}
}

// live returns the first position q from on such that v[q:] is a proper prefix of a pattern
// of kind mask (what follows could complete it), or len(v).
func (r *Redactor) live(v string, from int, mask kind) int {
	n := len(v)
	from = max(from, n-r.maxLen+1, 0)
	for q := from; q < n; q++ {
		rem := n - q
		if rem < keyLen {
			if r.prefixes[rem-1][packed(v[q:])]&mask != 0 {
				return q
			}
			continue
		}
		k := key(v, q)
		h := hash(k)
		if r.filter[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, pi := range r.table[k] {
			p := &r.patterns[pi]
			if len(p.text) <= rem {
				break // longest first
			}
			if p.kind&mask != 0 && p.text[:rem] == v[q:] {
				return q
			}
		}
	}
	return n
}
