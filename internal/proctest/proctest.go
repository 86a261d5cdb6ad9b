// Package proctest waits, in tests, for a process that is not the caller's child to exit:
// through a pidfd, which the kernel makes readable when the process ends, so nothing polls.
package proctest

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// WaitExit waits up to within for process pid to exit and reports whether it did (a pid that
// is already gone has). An error means the wait itself could not be made.
func WaitExit(pid int, within time.Duration) (bool, error) {
	pfd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(pfd)
	deadline := time.Now().Add(within)
	for {
		left := time.Until(deadline)
		if left < 0 {
			left = 0
		}
		fds := []unix.PollFd{{Fd: int32(pfd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("poll the pidfd of %d: %w", pid, err)
		}
		return n > 0, nil
	}
}
