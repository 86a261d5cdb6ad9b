package devtools

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// readAll reads messages until the reader fails, and returns them with its error.
func readAll(m *reader) ([][]byte, error) {
	var msgs [][]byte
	for {
		msg, err := m.next()
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, msg)
	}
}

func TestReaderSplitsAtNUL(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 200<<10) // longer than the reader's buffer
	tests := []struct {
		name string
		in   []byte
		max  int
		want [][]byte
		err  error
	}{
		{name: "nothing", in: nil, max: 10, err: io.EOF},
		{name: "one", in: []byte(`{"id":1}` + "\x00"), max: 10, want: [][]byte{[]byte(`{"id":1}`)}, err: io.EOF},
		{name: "two and an empty one", in: []byte("a\x00\x00b\x00"), max: 10, want: [][]byte{[]byte("a"), {}, []byte("b")}, err: io.EOF},
		{name: "cut short", in: []byte("a\x00{\"id\""), max: 10, want: [][]byte{[]byte("a")}, err: io.ErrUnexpectedEOF},
		{name: "at the limit", in: []byte("0123456789\x00"), max: 10, want: [][]byte{[]byte("0123456789")}, err: io.EOF},
		{name: "over the limit", in: []byte("0123456789A\x00"), max: 10, err: ErrTooLarge},
		{name: "longer than the buffer", in: append(append(bytes.Clone(long), 0), "z\x00"...), max: len(long), want: [][]byte{long, []byte("z")}, err: io.EOF},
		{name: "longer than the buffer and the limit", in: append(bytes.Clone(long), 0), max: len(long) - 1, err: ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte at a time too: a message arrives in pieces from a pipe.
			for _, r := range []io.Reader{bytes.NewReader(tt.in), iotest.OneByteReader(bytes.NewReader(tt.in))} {
				got, err := readAll(newReader(r, tt.max))
				if !errors.Is(err, tt.err) {
					t.Fatalf("got error %v, want %v", err, tt.err)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("got %d messages, want %d", len(got), len(tt.want))
				}
				for i := range got {
					if !bytes.Equal(got[i], tt.want[i]) {
						t.Errorf("message %d: got %.40q, want %.40q", i, got[i], tt.want[i])
					}
				}
			}
		})
	}
}

// A message the caller keeps is not changed by the messages read after it.
func TestReaderMessagesAreTheCallers(t *testing.T) {
	m := newReader(bytes.NewReader([]byte("first\x00second\x00")), 100)
	first, err := m.next()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.next(); err != nil {
		t.Fatal(err)
	}
	if string(first) != "first" {
		t.Errorf("got %q, want %q", first, "first")
	}
}

// FuzzReader: whatever the browser sends, the reader returns messages without NULs that,
// each followed by a NUL, make up the start of the input, never one over the limit, and
// stops with an error instead of panicking.
func FuzzReader(f *testing.F) {
	f.Add([]byte(`{"id":1,"result":{}}`+"\x00"), 64)
	f.Add([]byte("a\x00\x00b"), 1)
	f.Add([]byte("\x00\x00\x00"), 0)
	f.Add(bytes.Repeat([]byte("y"), 70<<10), 80<<10)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max < 0 || max > 1<<20 {
			return
		}
		msgs, err := readAll(newReader(bytes.NewReader(in), max))
		var rebuilt []byte
		for _, m := range msgs {
			if bytes.IndexByte(m, 0) >= 0 {
				t.Fatalf("a message holds a NUL: %q", m)
			}
			if len(m) > max {
				t.Fatalf("a message of %d bytes passed the limit %d", len(m), max)
			}
			rebuilt = append(append(rebuilt, m...), 0)
		}
		if !bytes.HasPrefix(in, rebuilt) {
			t.Fatalf("the messages are not the input's: %q from %q", rebuilt, in)
		}
		switch {
		case errors.Is(err, io.EOF):
			if len(rebuilt) != len(in) {
				t.Fatalf("end of input with %d bytes unread", len(in)-len(rebuilt))
			}
		case errors.Is(err, io.ErrUnexpectedEOF):
			if len(rebuilt) == len(in) || bytes.IndexByte(in[len(rebuilt):], 0) >= 0 {
				t.Fatalf("cut short, but the rest is %q", in[len(rebuilt):])
			}
		case errors.Is(err, ErrTooLarge):
			rest := in[len(rebuilt):]
			if i := bytes.IndexByte(rest, 0); i >= 0 && i <= max || i < 0 && len(rest) <= max {
				t.Fatalf("too large, but the next message is %d bytes of %d allowed", i, max)
			}
		default:
			t.Fatalf("unexpected error %v", err)
		}
	})
}
