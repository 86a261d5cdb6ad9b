package spawn

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// ErrStale is an identity whose process is not running: the pid is gone, is a zombie, or now
// belongs to a process that started at another time (a recycled pid). Nothing is signalled.
var ErrStale = errors.New("spawn: no running process has this identity (the row is stale)")

// Stop stops the process id names and its process group: SIGTERM to the group, SIGKILL when
// the grace has passed and anything of it is still running. It signals only when the
// identity matches — pid, start time and boot — and otherwise returns ErrStale and sends
// nothing. The check and the signal go through one pidfd, so a pid recycled in between is
// not reached (PIDFD_SIGNAL_PROCESS_GROUP; before Linux 6.9 the fallback signals the group
// right after the check). Stop returns once the process and its group are gone, or with an
// error when they are still there after SIGKILL.
func Stop(id Identity, grace time.Duration) error {
	if id.Pid <= 1 || id.Pid == os.Getpid() || id.Pid == unix.Getpgrp() {
		return ErrStale
	}
	pfd, err := openVerified(id)
	if err != nil {
		return err
	}
	if pfd >= 0 {
		defer unix.Close(pfd)
	}
	if err := signalGroup(pfd, id.Pid, unix.SIGTERM); err != nil {
		return fmt.Errorf("spawn: stop %v: %w", id, err)
	}
	if waitGone(pfd, id, time.Now().Add(grace), func() bool { return termDropped(id.Pid) && aloneInGroup(id.Pid) && Alive(id) }) {
		return nil
	}
	if err := signalGroup(pfd, id.Pid, unix.SIGKILL); err != nil {
		return fmt.Errorf("spawn: stop %v: %w", id, err)
	}
	if waitGone(pfd, id, time.Now().Add(killWait), nil) {
		return nil
	}
	return fmt.Errorf("spawn: stop %v: still running %v after SIGKILL", id, killWait)
}

// openVerified opens a pidfd on id.Pid and checks, after the open, that the process behind it
// is id's. It returns -1 and no error when the kernel has no pidfd_open.
func openVerified(id Identity) (int, error) {
	pfd, err := unix.PidfdOpen(id.Pid, 0)
	switch {
	case err == nil:
	case err == unix.ESRCH || err == unix.EINVAL:
		return -1, ErrStale
	case err == unix.ENOSYS || err == unix.EPERM:
		pfd = -1
	default:
		return -1, fmt.Errorf("spawn: stop %v: pidfd_open: %w", id, err)
	}
	// The descriptor names whichever process had the pid at the open; if that process has
	// id's start time now, it is id's process, since start times only grow.
	if !Alive(id) {
		if pfd >= 0 {
			_ = unix.Close(pfd)
		}
		return -1, ErrStale
	}
	return pfd, nil
}

// signalGroup sends sig to the process group of the process behind pfd. When pfd is -1, the
// kernel predates PIDFD_SIGNAL_PROCESS_GROUP, or the leader has exited, it signals group
// pgid instead, and only while it has live members (which keep its id from being reused).
func signalGroup(pfd, pgid int, sig unix.Signal) error {
	if pfd >= 0 {
		err := unix.PidfdSendSignal(pfd, sig, nil, unix.PIDFD_SIGNAL_PROCESS_GROUP)
		if err == nil {
			return nil
		}
		if err != unix.EINVAL && err != unix.ESRCH {
			return err
		}
	}
	if len(groupMembers(pgid)) == 0 {
		return nil
	}
	if err := unix.Kill(-pgid, sig); err != nil && err != unix.ESRCH {
		return err
	}
	return nil
}

// waitGone waits until id's process has exited and its group has no live member, or the
// deadline passes, and reports whether it is gone. The leader's exit is waited for on the
// pidfd, which becomes readable when it exits; the group's other members are polled. When
// early is set and reports true (a boxed process that was spared the SIGTERM, see
// termDropped), it stops waiting and reports false, so that SIGKILL follows at once.
func waitGone(pfd int, id Identity, deadline time.Time, early func() bool) bool {
	gone := func() bool { return !Alive(id) && len(groupMembers(id.Pid)) == 0 }
	wait := time.Millisecond
	for {
		if gone() {
			return true
		}
		if early != nil && early() {
			return false
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		step := min(wait, left)
		if pfd >= 0 {
			// The pidfd turns readable when the leader exits: no need to sleep past that.
			fds := []unix.PollFd{{Fd: int32(pfd), Events: unix.POLLIN}}
			if n, err := unix.Poll(fds, int(max(step.Milliseconds(), 1))); err == nil && n > 0 {
				// The leader has exited; what is left of its group is polled from here on.
				return pollUntil(deadline, gone)
			}
		} else {
			time.Sleep(step)
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}
