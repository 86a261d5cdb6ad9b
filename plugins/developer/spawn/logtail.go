package spawn

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Chunk is a bounded read of a process's log.
type Chunk struct {
	// Data is the log from Offset up to Next.
	Data string
	// Offset is the file offset of Data's first byte.
	Offset int64
	// Next is where the log ended when it was read: the since of the next call.
	Next int64
	// Dropped is how many bytes between the since asked for and Offset were skipped to keep
	// Data within max (the tail is kept).
	Dropped int64
}

// Tail reads the log at logPath from offset since to its current end, keeping at most max
// bytes, the last ones (max <= 0 or above MaxOutput means MaxOutput). A since below zero
// reads from the start; a since beyond the end (the log was replaced by a shorter one) reads
// from the start too. The log is opened with O_NOFOLLOW and must be a regular file.
func Tail(logPath string, since int64, max int) (Chunk, error) {
	if max <= 0 || max > MaxOutput {
		max = MaxOutput
	}
	fd, err := unix.Open(logPath, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		if err == unix.ELOOP {
			return Chunk{}, fmt.Errorf("spawn: read log %s: it is a symbolic link", logPath)
		}
		return Chunk{}, fmt.Errorf("spawn: read log %s: %w", logPath, err)
	}
	f := os.NewFile(uintptr(fd), logPath)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Chunk{}, fmt.Errorf("spawn: read log %s: %w", logPath, err)
	}
	if !fi.Mode().IsRegular() {
		return Chunk{}, fmt.Errorf("spawn: read log %s: not a regular file", logPath)
	}
	size := fi.Size()
	if since < 0 || since > size {
		since = 0
	}
	c := Chunk{Offset: since, Next: size}
	if size-since > int64(max) {
		c.Offset = size - int64(max)
		c.Dropped = c.Offset - since
	}
	buf := make([]byte, size-c.Offset)
	n, err := f.ReadAt(buf, c.Offset)
	if err != nil && err != io.EOF {
		return Chunk{}, fmt.Errorf("spawn: read log %s: %w", logPath, err)
	}
	buf = buf[:n]
	c.Next = c.Offset + int64(n)
	if c.Dropped > 0 {
		cut := trimPartialRune(buf)
		buf = buf[cut:]
		c.Offset += int64(cut)
		c.Dropped += int64(cut)
	}
	c.Data = string(buf)
	return c, nil
}
