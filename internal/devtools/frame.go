package devtools

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxMessage is the largest message the browser may send: a full-page screenshot, base64
// encoded, is the largest a screenshot reads.
const MaxMessage = 256 << 20

// ErrTooLarge means the browser sent a message longer than the reader's limit.
var ErrTooLarge = errors.New("devtools: a message from the browser is longer than the limit")

// reader splits the browser's side of the pipe into messages: each one a JSON text ended
// by a NUL byte.
type reader struct {
	r   *bufio.Reader
	max int
}

func newReader(r io.Reader, max int) *reader {
	return &reader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next message, without its NUL. The slice is the caller's. At the end of
// the input it returns io.EOF, or io.ErrUnexpectedEOF when the input ends inside a message.
func (m *reader) next() ([]byte, error) {
	var msg []byte
	for {
		part, err := m.r.ReadSlice(0)
		if len(msg)+len(part) > m.max+1 { // +1: the NUL is not counted
			return nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, m.max)
		}
		switch {
		case err == nil:
			if msg == nil {
				return bytes.Clone(part[:len(part)-1]), nil
			}
			return append(msg, part[:len(part)-1]...), nil
		case errors.Is(err, bufio.ErrBufferFull):
			msg = append(msg, part...)
		case errors.Is(err, io.EOF):
			if len(msg)+len(part) == 0 {
				return nil, io.EOF
			}
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}
