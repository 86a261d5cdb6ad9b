package logfile

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// ErrNoLog means the logs directory holds no log file: buddi serve has not run with this home.
var ErrNoLog = errors.New("logfile: no log")

// ReadOptions say which lines Read gives.
type ReadOptions struct {
	// Since drops the lines written before it. Zero: every line.
	Since time.Time
	// Follow keeps reading the lines written after the end, across a rotation, until the
	// context ends.
	Follow bool
	// Poll is how often a follower looks for new lines when it was not told of a change (the
	// directory is watched). Default one second.
	Poll time.Duration
}

// Read gives emit each line (without its newline) of the log files in dir, the oldest file
// first, then, with Follow, the lines written after, until ctx ends (which is no error). It
// returns ErrNoLog when there is no file at all, and the first error emit returns.
func Read(ctx context.Context, dir string, opts ReadOptions, emit func(line []byte) error) error {
	cur := &tail{path: filepath.Join(dir, Name)}
	if err := cur.open(); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	defer cur.close()
	old, err := rotated(dir)
	if err != nil {
		return err
	}
	if cur.f == nil && len(old) == 0 {
		return ErrNoLog
	}
	keep := since(opts.Since)
	out := func(line []byte) error {
		if !keep(line) {
			return nil
		}
		return emit(line)
	}
	for _, p := range old {
		fi, err := os.Stat(p)
		if err != nil {
			continue // rotated away while listing
		}
		if cur.info != nil && os.SameFile(fi, cur.info) {
			continue // the file opened as buddi.log was rotated since: it is read below
		}
		if !opts.Since.IsZero() && fi.ModTime().Before(opts.Since) {
			continue // every line in it is older
		}
		if err := copyFile(p, out); err != nil {
			return err
		}
	}
	if err := cur.drain(out); err != nil {
		return err
	}
	if !opts.Follow {
		return cur.flush(out)
	}
	return cur.follow(ctx, dir, opts.Poll, out)
}

// rotated lists buddi.log.N in dir, the oldest (highest N) first.
func rotated(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type numbered struct {
		n    int
		path string
	}
	var files []numbered
	for _, e := range entries {
		suffix, ok := strings.CutPrefix(e.Name(), Name+".")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if n, err := strconv.Atoi(suffix); err == nil && n > 0 {
			files = append(files, numbered{n, filepath.Join(dir, e.Name())})
		}
	}
	slices.SortFunc(files, func(a, b numbered) int { return b.n - a.n })
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.path
	}
	return paths, nil
}

func copyFile(path string, emit func([]byte) error) error {
	t := &tail{path: path}
	if err := t.open(); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	defer t.close()
	if err := t.drain(emit); err != nil {
		return err
	}
	return t.flush(emit)
}

// since returns whether a line is at or after t. A line with no time (not JSON, or cut short)
// goes with the line before it.
func since(t time.Time) func(line []byte) bool {
	if t.IsZero() {
		return func([]byte) bool { return true }
	}
	last := false
	return func(line []byte) bool {
		if at, ok := lineTime(line); ok {
			last = !at.Before(t)
		}
		return last
	}
}

// lineTime reads a line's "time".
func lineTime(line []byte) (time.Time, bool) {
	var rec struct {
		Time time.Time `json:"time"`
	}
	if err := json.Unmarshal(line, &rec); err != nil || rec.Time.IsZero() {
		return time.Time{}, false
	}
	return rec.Time, true
}

// tail reads one file line by line, keeping a last line that has no newline yet.
type tail struct {
	path    string
	f       *os.File
	info    os.FileInfo
	r       *bufio.Reader
	partial []byte
}

func (t *tail) open() error {
	f, err := os.Open(t.path)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	t.f, t.info, t.r, t.partial = f, fi, bufio.NewReaderSize(f, 64<<10), nil
	return nil
}

func (t *tail) close() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}

// drain emits every whole line up to the end of the file as it is now.
func (t *tail) drain(emit func([]byte) error) error {
	if t.f == nil {
		return nil
	}
	for {
		b, err := t.r.ReadBytes('\n')
		if err == io.EOF {
			t.partial = append(t.partial, b...)
			return nil
		}
		if err != nil {
			return err
		}
		line := b[:len(b)-1]
		if len(t.partial) > 0 {
			line = append(t.partial, line...)
			t.partial = nil
		}
		if err := emit(line); err != nil {
			return err
		}
	}
}

// flush emits a last line that never got its newline.
func (t *tail) flush(emit func([]byte) error) error {
	if len(t.partial) == 0 {
		return nil
	}
	line := t.partial
	t.partial = nil
	return emit(line)
}

// follow emits the lines written from now on. When buddi.log is another file than the one
// open (it was rotated), the rest of the old one is read, then the new one from its start.
func (t *tail) follow(ctx context.Context, dir string, poll time.Duration, emit func([]byte) error) error {
	if poll <= 0 {
		poll = time.Second
	}
	// Without a watch (no inotify left), the poll alone finds new lines.
	var events chan fsnotify.Event
	var errs chan error
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		if w.Add(dir) == nil {
			events, errs = w.Events, w.Errors
		}
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		if err := t.drain(emit); err != nil {
			return err
		}
		if fi, err := os.Stat(t.path); err == nil && (t.info == nil || !os.SameFile(fi, t.info)) {
			if err := t.drain(emit); err != nil {
				return err
			}
			if err := t.flush(emit); err != nil {
				return err
			}
			t.close()
			if err := t.open(); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			continue
		}
		select {
		case <-ctx.Done():
			return t.flush(emit)
		case <-events:
		case <-errs:
		case <-tick.C:
		}
	}
}
