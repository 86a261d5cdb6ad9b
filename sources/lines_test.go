package sources_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"buddi/plugins"
)

// lines is a test-only plugin: its source reads inbox.txt in a directory and asks the agent
// "reader" to handle each line it has not seen, with the line as the dedup key. Its cursor
// (how many lines it handled) is a file beside it, written after its enqueues, as a source
// owns its cursor and its transaction.
type lines struct {
	dir   string
	polls atomic.Int64
	// crash, when set, makes the next poll stop after its enqueues and before it writes its
	// cursor: the crash between the enqueue and the commit.
	crash atomic.Bool
	// fail, when set, is the error every poll returns.
	fail atomic.Pointer[error]
	// panics, when set, makes the next poll panic.
	panics atomic.Bool
}

func (l *lines) source() plugins.Source {
	return plugins.Source{ID: "lines.inbox", Description: "new lines of inbox.txt", Period: time.Hour, Poll: l.poll}
}

func (l *lines) write(text string) {
	f, err := os.OpenFile(filepath.Join(l.dir, "inbox.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		panic(err)
	}
}

func (l *lines) poll(ctx context.Context, enqueue plugins.EnqueueRun) error {
	l.polls.Add(1)
	if l.panics.CompareAndSwap(true, false) {
		panic("the inbox reader broke")
	}
	if p := l.fail.Load(); p != nil {
		return *p
	}
	cursor := 0
	if b, err := os.ReadFile(filepath.Join(l.dir, "cursor")); err == nil {
		cursor, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	f, err := os.Open(filepath.Join(l.dir, "inbox.txt"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		if n <= cursor || strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		if err := enqueue(ctx, "reader", "Handle this line: "+sc.Text(), sc.Text()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if l.crash.CompareAndSwap(true, false) {
		return errors.New("the reader crashed before it saved its cursor")
	}
	return os.WriteFile(filepath.Join(l.dir, "cursor"), []byte(strconv.Itoa(n)), 0o600)
}
