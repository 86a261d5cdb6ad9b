package spawn

import (
	"sync"
	"unicode/utf8"
)

// MaxOutput is the most output Run keeps, over both streams together: the last 200 KB
// (seed 000 §4, "Output bounded (200 KB over both streams together, tail kept)"). It is also
// the most Tail returns in one read.
const MaxOutput = 200 << 10

// tailBuffer keeps the last max bytes written to it. It grows to max and then becomes a ring.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	head  int // once full: the index of the oldest byte
	total int64
}

// newTail returns a tailBuffer keeping the last max bytes.
func newTail(max int) *tailBuffer { return &tailBuffer{max: max} }

// Write keeps the tail of what it is given. It never fails.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	t.total += int64(n)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		t.head = 0
		return n, nil
	}
	if room := t.max - len(t.buf); room > 0 {
		if len(p) <= room {
			t.buf = append(t.buf, p...)
			return n, nil
		}
		t.buf = append(t.buf, p[:room]...)
		p = p[room:]
		t.head = 0
	}
	for len(p) > 0 {
		c := copy(t.buf[t.head:], p)
		p = p[c:]
		t.head = (t.head + c) % t.max
	}
	return n, nil
}

// result returns what was kept and how many bytes were dropped from the front. When bytes
// were dropped, a UTF-8 sequence cut in two at the front is dropped too.
func (t *tailBuffer) result() (string, int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]byte, len(t.buf))
	n := copy(out, t.buf[t.head:])
	copy(out[n:], t.buf[:t.head])
	dropped := t.total - int64(len(out))
	if dropped > 0 {
		cut := trimPartialRune(out)
		out = out[cut:]
		dropped += int64(cut)
	}
	return string(out), dropped
}

// trimPartialRune returns how many leading bytes of b are the continuation of a UTF-8
// sequence that began before b (at most utf8.UTFMax-1).
func trimPartialRune(b []byte) int {
	i := 0
	for i < len(b) && i < utf8.UTFMax-1 && !utf8.RuneStart(b[i]) {
		i++
	}
	return i
}
