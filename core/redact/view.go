package redact

import (
	"strings"
	"unicode/utf8"
	"unsafe"
)

// view is the text decoded one way (JSON escapes, percent escapes, hex digits, wrapped lines
// joined), with the span of text each decoded byte came from, so that a secret found in the
// view replaces the text it was decoded from.
//
// A view that decodes nothing is the text itself: while it mirrors the text it stores
// nothing, and the scan of the text stands for it. Its first decoded byte makes it keep its
// bytes, from context bytes before that one on (what a match reaching the decoded byte can
// span).
type view struct {
	b          []byte
	start, end []int32 // the text offsets each byte came from, [start, end); end never decreases
	mirror     bool    // the view is the text from from to next: nothing stored
	from, next int
	context    int // bytes of a mirrored stretch kept before the first decoded byte
	decoded    int // text offset just past the source of the last decoded (or dropped) byte
	// segment, when set (a one-shot redaction), takes the stored bytes once nothing can
	// match across them any more: a view that mirrors the text again for more than context
	// bytes (what follows is the text's to scan), a hex run that ended. They are dropped.
	segment func(v *view)
}

func newView(mirror bool, context int) view { return view{mirror: mirror, context: context} }

// pass adds text[i] (text offset base+i) as it is.
func (v *view) pass(text string, base, i int) {
	if v.mirror {
		if v.next != base+i {
			v.from = base + i
		}
		v.next = base + i + 1
		return
	}
	v.put(text[i], base+i, base+i+1)
	if v.segment != nil && base+i+1-v.decoded > v.context {
		v.segment(v)
		v.b, v.start, v.end = v.b[:0], v.start[:0], v.end[:0]
		// Mirror again from the last decoded byte on: a later one is stored with the text
		// before it.
		v.mirror, v.from, v.next = true, v.decoded, base+i+1
	}
}

// passRange adds text[i:j] as it is: at once while the view mirrors the text.
func (v *view) passRange(text string, base, i, j int) {
	for ; !v.mirror && i < j; i++ {
		v.pass(text, base, i) // may end a segment and mirror again
	}
	if i < j {
		if v.next != base+i {
			v.from = base + i
		}
		v.next = base + j
	}
}

// add adds a decoded byte c that stands for the text from start to end.
func (v *view) add(text string, base int, c byte, start, end int) {
	v.diverge(text, base, end)
	v.put(c, start, end)
}

// addRune adds the bytes of a decoded character.
func (v *view) addRune(text string, base int, r rune, start, end int) {
	var buf [utf8.UTFMax]byte
	for _, c := range buf[:utf8.EncodeRune(buf[:], r)] {
		v.add(text, base, c, start, end)
	}
}

// diverge records that the view stops being the text at text offset upto (a byte decoded
// or dropped): a mirrored stretch before it is stored.
func (v *view) diverge(text string, base, upto int) {
	v.decoded = upto
	if !v.mirror {
		return
	}
	v.mirror = false
	for k := max(v.from, v.next-v.context, base); k < v.next; k++ {
		v.put(text[k-base], k, k+1)
	}
}

func (v *view) put(c byte, start, end int) {
	v.b = append(v.b, c)
	v.start = append(v.start, int32(start))
	v.end = append(v.end, int32(end))
}

// string returns the stored bytes without copying; valid until the next change.
func (v *view) string() string { return unsafe.String(unsafe.SliceData(v.b), len(v.b)) }

// drop forgets the first n bytes, reusing the memory.
func (v *view) drop(n int) {
	k := copy(v.b, v.b[n:])
	v.b = v.b[:k]
	copy(v.start, v.start[n:])
	v.start = v.start[:k]
	copy(v.end, v.end[n:])
	v.end = v.end[:k]
}

// shift moves the view's offsets n bytes back.
func (v *view) shift(n int) {
	for i := range v.start {
		v.start[i] -= int32(n)
		v.end[i] -= int32(n)
	}
	v.from, v.next, v.decoded = v.from-n, v.next-n, v.decoded-n
}

// remirror makes a view that has decoded nothing since text offset at, and stores only
// bytes from at on, mirror the text again.
func (v *view) remirror(at int) bool {
	if v.mirror || v.decoded > at || len(v.b) > 0 && int(v.start[0]) < at {
		return false
	}
	v.mirror = true
	v.from, v.next = at, at
	if n := len(v.b); n > 0 {
		v.from, v.next = int(v.start[0]), int(v.end[n-1])
	}
	v.b, v.start, v.end = v.b[:0], v.start[:0], v.end[:0]
	return true
}

// viewBreak ends a run of hex digits in a hex view. It is never part of valid UTF-8, so no
// value (which is UTF-8 text) matches across it.
const viewBreak = 0xff

// A decoder turns text into one or more views as the text arrives. It reads only what it
// can decide on: input whose meaning depends on what comes next (half an escape, a line
// break whose next line is not there yet) waits for the next call.
type decoder interface {
	// decode reads text, which starts at text offset base and holds the decoder's position,
	// and adds what it decodes to out. final says the text ends there.
	decode(text string, base int, out []view, final bool)
	// held is the text offset of the first byte the decoder has not turned into output
	// for good: no later output comes from text before it.
	held() int
	// shift moves the decoder's offsets n bytes back (a long stream starts counting anew).
	shift(n int)
}

// viewKind is one way of decoding the text.
type viewKind struct {
	mask    kind // the patterns looked for in its views
	outputs int  // how many views its decoder makes
	mirrors bool // its views are the text itself until something is decoded
	// needed says whether the view can find anything the scan of the text misses; when it
	// cannot, the one-shot redaction skips it (a stream decodes every view: the result is
	// the same).
	needed  func(s string) bool
	decoder func() decoder
}

var viewKinds = [...]viewKind{
	{mask: kindAll, outputs: 1, mirrors: true, needed: joinNeeded, decoder: func() decoder { return &joinDecoder{} }},
	{mask: kindAll, outputs: 1, mirrors: true, needed: jsonNeeded, decoder: jsonDecoder},
	{mask: kindAll, outputs: 1, mirrors: true, needed: percentNeeded, decoder: percentDecoder},
	{mask: kindText, outputs: 2, needed: hexNeeded, decoder: func() decoder { return &hexDecoder{lineStart: true} }},
}

// b64 holds the characters of both base64 alphabets and its padding.
var b64 = func() (a [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=" {
		a[c] = true
	}
	return a
}()

// unhex is a hex digit's value, or -1.
var unhex = func() (a [256]int8) {
	for i := range a {
		a[i] = -1
	}
	for i, c := range "0123456789abcdef" {
		a[c] = int8(i)
	}
	for i, c := range "ABCDEF" {
		a[c] = int8(10 + i)
	}
	return a
}()

// hexish is 1 for a hex digit, 2 for what the hex decoder lets stand between two, 0 else.
var hexish = func() (a [256]uint8) {
	for c := range a {
		if unhex[c] >= 0 {
			a[c] = 1
		}
	}
	for _, c := range " :-\t\r\n" {
		a[c] = 2
	}
	return a
}()

// hexStretch reports whether s has hexMinRun hex digits with nothing but what the hex
// decoder lets stand between digits among them: most text has not, and needs no more look.
// Such a stretch is at least hexMinRun bytes long, so the test looks at every hexMinRun-th
// byte and, only where that one could be in a stretch, at the stretch around it.
func hexStretch(s string) bool {
	for i := 0; i+hexMinRun <= len(s); {
		p := i + hexMinRun - 1
		if hexish[s[p]] == 0 {
			i = p + 1
			continue
		}
		k := p
		for k > i && hexish[s[k-1]] != 0 {
			k--
		}
		digits := 0
		for ; k < len(s) && hexish[s[k]] != 0; k++ {
			if hexish[s[k]] == 1 {
				if digits++; digits == hexMinRun {
					return true
				}
			}
		}
		i = k + 1
	}
	return false
}

// joinRun is how many base64 characters must end a line for the line break after it to be
// a wrap (PEM wraps at 64, MIME at 76).
const joinRun = 16

// joinDecoder joins wrapped lines: a line break ("\n" or "\r\n", and the indentation after
// it) between a line that ends in at least joinRun base64 characters and a line that
// begins with one is dropped. Base64 wrapped at any width, and hex, are then found whole.
type joinDecoder struct {
	pos int // text offset of the next byte to read
	run int // base64 characters just before pos, up to joinRun (a join carries it over)
}

func (d *joinDecoder) held() int { return d.pos }

func (d *joinDecoder) shift(n int) { d.pos -= n }

func (d *joinDecoder) decode(text string, base int, out []view, final bool) {
	v := &out[0]
	i := d.pos - base
	for i < len(text) {
		if v.mirror { // nothing decoded lately: on to the next line break
			j := strings.IndexAny(text[i:], "\r\n")
			if j < 0 {
				j = len(text) - i
			}
			d.run = b64Run(d.run, text[i:i+j])
			v.passRange(text, base, i, i+j)
			if i += j; i == len(text) {
				break
			}
		}
		c := text[i]
		if (c == '\n' || c == '\r') && d.run >= joinRun {
			j, ok, decided := wrapAt(text, i, final)
			if !decided {
				break
			}
			if ok {
				v.diverge(text, base, base+j)
				i = j
				continue
			}
		}
		v.pass(text, base, i)
		if b64[c] {
			d.run = min(d.run+1, joinRun)
		} else {
			d.run = 0
		}
		i++
	}
	d.pos = base + i
}

// b64Run returns the run of base64 characters (up to joinRun) at the end of s, after run
// before it.
func b64Run(run int, s string) int {
	n := 0
	for n < joinRun && n < len(s) && b64[s[len(s)-1-n]] {
		n++
	}
	if n == len(s) {
		return min(run+n, joinRun)
	}
	return n
}

// wrapAt looks at the line break at text[i]: whether it (with the indentation after it) is
// followed by a base64 character, and j, the index of that character. decided is false when
// the text ends before that can be known.
func wrapAt(text string, i int, final bool) (j int, ok, decided bool) {
	j = i
	if text[j] == '\r' {
		if j++; j == len(text) {
			return 0, false, final
		}
		if text[j] != '\n' {
			return 0, false, true
		}
	}
	j++
	for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
		j++
	}
	if j == len(text) {
		return 0, false, final
	}
	return j, b64[text[j]], true
}

// joinNeeded reports whether s has a line break the join decoder would drop.
func joinNeeded(s string) bool {
	for i := 0; i < len(s); {
		n := strings.IndexByte(s[i:], '\n')
		if n < 0 {
			return false
		}
		at := i + n
		k := at
		if k > 0 && s[k-1] == '\r' {
			k--
		}
		run := 0
		for run < joinRun && k-run > 0 && b64[s[k-run-1]] {
			run++
		}
		if run == joinRun {
			if _, ok, _ := wrapAt(s, k, true); ok {
				return true
			}
		}
		i = at + 1
	}
	return false
}

// escapeDecoder decodes one kind of escape, each starting with mark, wherever it is; the
// text between escapes passes as it is, and a mark that starts no escape is kept.
type escapeDecoder struct {
	pos  int
	mark byte
	// at reads the escape at the start of s (which starts with mark): its length (0 when it
	// is none) and what it stands for; decided is false when s ends too soon to tell.
	at func(s string, final bool) (n int, r rune, decided bool)
	// emit adds what the escape text[start:end] stands for to v.
	emit func(v *view, text string, base int, r rune, start, end int)
}

func (d *escapeDecoder) held() int { return d.pos }

func (d *escapeDecoder) shift(n int) { d.pos -= n }

func (d *escapeDecoder) decode(text string, base int, out []view, final bool) {
	v := &out[0]
	i := d.pos - base
	for i < len(text) {
		if text[i] != d.mark {
			j := strings.IndexByte(text[i:], d.mark)
			if j < 0 {
				j = len(text) - i
			}
			v.passRange(text, base, i, i+j)
			i += j
			continue
		}
		n, r, decided := d.at(text[i:], final)
		if !decided {
			break
		}
		if n == 0 {
			v.pass(text, base, i)
			i++
			continue
		}
		d.emit(v, text, base, r, base+i, base+i+n)
		i += n
	}
	d.pos = base + i
}

// jsonDecoder decodes JSON string escapes wherever they are: \" \\ \/ \b \f \n \r \t and
// \uXXXX in either case, with surrogate pairs (a lone surrogate becomes U+FFFD).
func jsonDecoder() decoder {
	return &escapeDecoder{mark: '\\', at: unescapeAt, emit: (*view).addRune}
}

// unescapeAt reads the JSON escape at the start of s (a backslash): its length (0 when it is
// none) and the character. decided is false when s ends too soon to tell.
func unescapeAt(s string, final bool) (n int, r rune, decided bool) {
	if len(s) < 2 {
		return 0, 0, final
	}
	switch s[1] {
	case '"', '\\', '/':
		return 2, rune(s[1]), true
	case 'b':
		return 2, '\b', true
	case 'f':
		return 2, '\f', true
	case 'n':
		return 2, '\n', true
	case 'r':
		return 2, '\r', true
	case 't':
		return 2, '\t', true
	case 'u':
	default:
		return 0, 0, true
	}
	hi, ok, decided := hex4(s[2:], final)
	if !decided || !ok {
		return 0, 0, decided
	}
	switch {
	case hi >= 0xdc00 && hi < 0xe000:
		return 6, utf8.RuneError, true
	case hi < 0xd800 || hi >= 0xe000:
		return 6, hi, true
	}
	// A high surrogate: a low one may follow.
	rest := s[6:]
	for i := 0; i < min(len(rest), 2); i++ {
		if rest[i] != `\u`[i] {
			return 6, utf8.RuneError, true
		}
	}
	if len(rest) < 2 {
		if final {
			return 6, utf8.RuneError, true
		}
		return 0, 0, false
	}
	lo, ok, decided := hex4(rest[2:], final)
	switch {
	case !decided:
		return 0, 0, false
	case !ok || lo < 0xdc00 || lo >= 0xe000:
		return 6, utf8.RuneError, true
	}
	return 12, 0x10000 + (hi-0xd800)<<10 + (lo - 0xdc00), true
}

// hex4 reads four hex digits at the start of s.
func hex4(s string, final bool) (r rune, ok, decided bool) {
	for i := range 4 {
		if i == len(s) {
			return 0, false, final
		}
		v := unhex[s[i]]
		if v < 0 {
			return 0, false, true
		}
		r = r<<4 | rune(v)
	}
	return r, true, true
}

func jsonNeeded(s string) bool { return strings.IndexByte(s, '\\') >= 0 }

// percentDecoder decodes %XX escapes (either case) wherever they are; "+" is kept (the
// query form of a space is one of the encoded forms instead).
func percentDecoder() decoder {
	return &escapeDecoder{mark: '%', at: percentAt, emit: func(v *view, text string, base int, r rune, start, end int) {
		v.add(text, base, byte(r), start, end)
	}}
}

// percentAt reads the %XX escape at the start of s: its length (0 when it is none) and the
// byte; decided is false when s ends too soon to tell.
func percentAt(s string, final bool) (n int, r rune, decided bool) {
	if len(s) < 3 {
		return 0, 0, final || (len(s) == 2 && unhex[s[1]] < 0)
	}
	if unhex[s[1]] >= 0 && unhex[s[2]] >= 0 {
		return 3, rune(unhex[s[1]])<<4 | rune(unhex[s[2]]), true
	}
	return 0, 0, true
}

func percentNeeded(s string) bool {
	for i := 0; i < len(s); {
		n := strings.IndexByte(s[i:], '%')
		if n < 0 {
			return false
		}
		i += n + 1
		if i+1 < len(s) && unhex[s[i]] >= 0 && unhex[s[i+1]] >= 0 {
			return true
		}
	}
	return false
}

const (
	dumpOffset  = 8   // hex digits of a dump line's offset (xxd, hexdump -C)
	dumpMaxLine = 256 // a longer line is not a dump line
	hexMinRun   = 2 * MinLength
)

// hexDecoder decodes runs of hex digits into bytes, in either case, at both alignments (two
// views: from the run's first digit and from its second). A run goes on across one
// separator (space, colon or dash: "73:6b:2d", "736b 2d6c") and across a line break and
// indentation ("…:2d:\n    6c:69", as openssl prints keys). In a dump (xxd, hexdump -C:
// lines that begin with an eight-digit offset and ": " or two spaces) only the hex column
// counts, the run goes on from line to line, and each byte stands for the rest of its line,
// so that the character column beside a secret's digits goes with them.
type hexDecoder struct {
	pos       int  // text offset of the next byte to read
	lineStart bool // pos begins a line not yet classified
	inDump    bool // the line before was a dump line
	n         int  // digits in the current run
	prev      int  // text offset of the run's last digit
	prevVal   byte
	sep       int // since the last digit: 0 nothing, 1 a separator, 2 a line break
	// dry counts instead of decoding (hexNeeded): trigger is set when a run of hexMinRun or
	// more digits is spaced, of mixed case, or in a dump, which the text's own scan misses.
	dry, trigger                 bool
	spaced, lower, upper, dumped bool
}

func (d *hexDecoder) held() int {
	if d.n > 0 {
		return d.prev
	}
	return d.pos
}

func (d *hexDecoder) shift(n int) { d.pos, d.prev = d.pos-n, d.prev-n }

func (d *hexDecoder) decode(text string, base int, out []view, final bool) {
	i := d.pos - base
loop:
	for i < len(text) {
		if d.lineStart {
			end, dump, decided := dumpLine(text, i, final)
			if !decided {
				break
			}
			d.lineStart = false
			if dump {
				if !d.inDump {
					d.endRun(out, base+i)
				}
				d.inDump = true
				d.dumpDigits(text, i, end, base, out)
				if i = end; i < len(text) {
					i++ // the line break
					d.lineStart = true
				}
				continue
			}
			if d.inDump {
				d.endRun(out, base+i)
				d.inDump = false
			}
		}
		c := text[i]
		if v := unhex[c]; v >= 0 {
			d.digit(out, byte(v), c, base+i, base+i+1)
			i++
			continue
		}
		switch c {
		case ' ', ':', '-', '\t':
			if d.n > 0 && d.sep == 0 && c != '\t' {
				d.sep = 1
				i++
				continue
			}
			if d.n > 0 && d.sep == 2 && (c == ' ' || c == '\t') {
				i++
				continue
			}
		case '\r', '\n':
			n := 1
			if c == '\r' {
				if i+1 == len(text) && !final {
					break loop
				}
				if i+1 == len(text) || text[i+1] != '\n' {
					break
				}
				n = 2
			}
			if d.n > 0 && d.sep < 2 {
				d.sep = 2
			} else {
				d.endRun(out, base+i)
			}
			i += n
			d.lineStart = true
			continue
		}
		d.endRun(out, base+i)
		i++
	}
	d.pos = base + i
	if final {
		d.endRun(out, base+i)
	}
}

// digit adds one digit (value v, character c) of the run at text offset start; the byte it
// completes stands for the text up to end.
func (d *hexDecoder) digit(out []view, v, c byte, start, end int) {
	if d.n > 0 {
		if d.sep > 0 {
			d.spaced = true
		}
		if !d.dry {
			out[(d.n-1)%2].put(d.prevVal<<4|v, d.prev, end)
		}
	}
	switch {
	case 'a' <= c && c <= 'f':
		d.lower = true
	case 'A' <= c && c <= 'F':
		d.upper = true
	}
	d.prev, d.prevVal = start, v
	d.n++
	d.sep = 0
}

// endRun ends the current run at text offset at.
func (d *hexDecoder) endRun(out []view, at int) {
	if d.n == 0 {
		return
	}
	if d.n >= hexMinRun && (d.spaced || d.lower && d.upper || d.dumped) {
		d.trigger = true
	}
	if !d.dry {
		for i := range out {
			v := &out[i]
			if d.n <= i+1 {
				continue // the view got no byte of this run
			}
			if v.segment != nil { // runs are matched one by one
				v.segment(v)
				v.b, v.start, v.end = v.b[:0], v.start[:0], v.end[:0]
				continue
			}
			v.put(viewBreak, at, at)
		}
	}
	d.n, d.sep = 0, 0
	d.spaced, d.lower, d.upper, d.dumped = false, false, false, false
}

// dumpDigits feeds the hex column of the dump line text[i:end].
func (d *hexDecoder) dumpDigits(text string, i, end, base int, out []view) {
	j := i + dumpOffset
	hexdump := text[j] == ' ' // hexdump -C: two spaces, and two more after the eighth byte
	if hexdump {
		j += 2
	} else {
		for j++; j < end && text[j] == ' '; j++ {
		}
	}
	digits := 0
	for j < end {
		c := text[j]
		if v := unhex[c]; v >= 0 {
			d.dumped = true
			d.digit(out, byte(v), c, base+j, base+end)
			digits++
			j++
			continue
		}
		if c == ' ' && j+1 < end && unhex[text[j+1]] >= 0 {
			j++
			continue
		}
		if hexdump && c == ' ' && digits == 16 && j+2 < end && text[j+1] == ' ' && unhex[text[j+2]] >= 0 {
			j += 2
			continue
		}
		break
	}
}

// dumpLine classifies the line at text[i]: a dump line begins with eight hex digits, then
// ": " or two spaces, then a hex digit pair, and is at most dumpMaxLine long. end is where
// it ends (its line break, or the end of the text).
func dumpLine(text string, i int, final bool) (end int, dump, decided bool) {
	const head = dumpOffset + 4
	for k := range head {
		if i+k == len(text) {
			return 0, false, final
		}
		c := text[i+k]
		var ok bool
		switch {
		case k < dumpOffset || k >= dumpOffset+2:
			ok = unhex[c] >= 0
		case k == dumpOffset:
			ok = c == ':' || c == ' '
		default:
			ok = c == ' '
		}
		if !ok {
			return 0, false, true
		}
	}
	if nl := strings.IndexByte(text[i:min(len(text), i+dumpMaxLine+1)], '\n'); nl >= 0 {
		return i + nl, true, true
	}
	if len(text)-i > dumpMaxLine {
		return 0, false, true
	}
	return len(text), final, final
}

// hexNeeded reports whether s has a run of hex digits that the scan of the text itself
// would not find a value in: spaced, of mixed case, or in a dump.
func hexNeeded(s string) bool {
	if !hexStretch(s) {
		return false
	}
	d := hexDecoder{lineStart: true, dry: true}
	d.decode(s, 0, nil, true)
	return d.trigger
}
