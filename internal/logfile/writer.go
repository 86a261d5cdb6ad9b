package logfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// Name is the current log file's name in the logs directory; rotated ones add .1, .2, ….
const Name = "buddi.log"

// Defaults of Options.
const (
	DefaultMaxSize = 10 << 20
	DefaultKeep    = 3
)

// Dir is the logs directory of the data directory home.
func Dir(home string) string { return filepath.Join(home, "logs") }

// Options tune a Writer. The zero value works.
type Options struct {
	// MaxSize is the size in bytes past which the file is rotated before the next write.
	// Default DefaultMaxSize (10 MiB).
	MaxSize int64
	// Keep is how many rotated files are kept beside the current one. Default DefaultKeep.
	Keep int
}

// Writer appends to dir/buddi.log and rotates it by size. Each Write is one log line (a
// slog handler writes a record in one call), so a line is never split across two files.
// Safe for concurrent use.
type Writer struct {
	dir  string
	opts Options

	mu   sync.Mutex
	f    *os.File
	size int64
}

// Open makes dir (0700) and opens its buddi.log for appending (0600; a link there is refused).
func Open(dir string, opts Options) (*Writer, error) {
	if opts.MaxSize <= 0 {
		opts.MaxSize = DefaultMaxSize
	}
	if opts.Keep <= 0 {
		opts.Keep = DefaultKeep
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("make the logs directory %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("make the logs directory %s private: %w", dir, err)
	}
	w := &Writer{dir: dir, opts: opts}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *Writer) path(n int) string {
	if n == 0 {
		return filepath.Join(w.dir, Name)
	}
	return filepath.Join(w.dir, Name+"."+strconv.Itoa(n))
}

func (w *Writer) open() error {
	f, err := os.OpenFile(w.path(0), os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("open the log file: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && fi.Mode().Perm() != 0o600 {
		err = f.Chmod(0o600)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("open the log file: %w", err)
	}
	w.f, w.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past MaxSize.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return 0, os.ErrClosed
	}
	if w.size > 0 && w.size+int64(len(p)) > w.opts.MaxSize {
		// A rotation that could not shift the old files still reopens buddi.log: the line
		// is written rather than lost.
		if err := w.rotate(); err != nil && w.f == nil {
			return 0, err
		}
	}
	n, err := w.f.Write(p)
	w.size += int64(n)
	return n, err
}

// rotate shifts buddi.log.N to .N+1 (the oldest beyond Keep is removed), buddi.log to .1,
// and opens an empty buddi.log (or, when a shift failed, buddi.log as it is).
func (w *Writer) rotate() error {
	_ = w.f.Close()
	w.f = nil
	var shift error
	if err := os.Remove(w.path(w.opts.Keep)); err != nil && !errors.Is(err, os.ErrNotExist) {
		shift = err
	}
	for n := w.opts.Keep - 1; n >= 0 && shift == nil; n-- {
		if err := os.Rename(w.path(n), w.path(n+1)); err != nil && !errors.Is(err, os.ErrNotExist) {
			shift = err
		}
	}
	if err := w.open(); err != nil {
		return err
	}
	if shift != nil {
		return fmt.Errorf("rotate the log: %w", shift)
	}
	return nil
}

// Close closes the current file; later writes fail.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
