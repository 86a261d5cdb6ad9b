package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked means another buddi holds the data directory.
var ErrLocked = errors.New("datadir: locked by another buddi")

// LockedError names the holder.
type LockedError struct {
	Dir string // the data directory
	Pid int    // the holder's pid, read from buddi.lock; 0 when unreadable
}

// Error says what happened in one sentence.
func (e *LockedError) Error() string {
	who := "another buddi"
	if e.Pid > 0 {
		who = fmt.Sprintf("another buddi (pid %d)", e.Pid)
	}
	return fmt.Sprintf("%s is already using %s: stop it first, or set BUDDI_HOME to another directory", who, e.Dir)
}

// Unwrap gives the cause, for errors.Is and errors.As.
func (e *LockedError) Unwrap() error { return ErrLocked }

// Lock is an exclusive hold on a data directory. The kernel releases it when the process
// dies, however it dies, so a killed buddi never leaves a stale lock.
type Lock struct{ f *os.File }

// TryLock takes the data directory's lock without waiting.
func TryLock(dir string) (*Lock, error) {
	path := filepath.Join(dir, "buddi.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		raw, _ := os.ReadFile(path)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockedError{Dir: dir, Pid: pid}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}
