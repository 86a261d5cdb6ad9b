package spawn

import (
	"time"

	"golang.org/x/sys/unix"
)

// DefaultGrace is the time between SIGTERM and SIGKILL when a Spec leaves Grace at zero.
const DefaultGrace = 2 * time.Second

// killWait bounds the wait for a process group to be gone once it has had SIGKILL.
const killWait = 5 * time.Second

// waitExited blocks until our child pid has exited, leaving it unreaped (WNOWAIT): while it
// is a zombie its pid, and so its group id, cannot be given to another process, so the
// group can still be signalled safely.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
			return
		}
	}
}

// signalOwn signals the group of our own, not yet reaped, child pid, and the child itself
// when it has moved to another group of its session.
func signalOwn(pid int, sig unix.Signal) {
	_ = unix.Kill(-pid, sig)
	if st, err := readStat(pid); err == nil && st.pgrp != pid {
		_ = unix.Kill(pid, sig)
	}
}

// terminate ends our not yet reaped child pid and its group: SIGTERM, then SIGKILL when the
// grace has passed. If the child ends within the grace, the rest of its group has what is
// left of the grace to end too. It returns the signal that was sent last, once the child has
// exited.
func terminate(pid int, exited <-chan struct{}, grace time.Duration) unix.Signal {
	signalOwn(pid, unix.SIGTERM)
	deadline := time.Now().Add(grace)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
		if pollUntil(deadline, func() bool { return len(groupMembers(pid)) == 0 }) {
			return unix.SIGTERM
		}
	case <-t.C:
	}
	signalOwn(pid, unix.SIGKILL)
	<-exited
	return unix.SIGKILL
}

// finishGroup is called once our child pid has exited and before it is reaped: whatever it
// left running in its group gets SIGTERM, what is left of it after the grace gets SIGKILL.
func finishGroup(pid int, grace time.Duration) {
	if len(groupMembers(pid)) == 0 {
		return
	}
	_ = unix.Kill(-pid, unix.SIGTERM)
	if pollUntil(time.Now().Add(grace), func() bool { return len(groupMembers(pid)) == 0 }) {
		return
	}
	_ = unix.Kill(-pid, unix.SIGKILL)
	pollUntil(time.Now().Add(killWait), func() bool { return len(groupMembers(pid)) == 0 })
}

// pollUntil calls done until it reports true or the deadline passes, waiting a little longer
// each time (1 ms, doubling, at most 50 ms), and reports whether done reported true. It is
// for what nothing signals: the members of a process group that are not our children.
func pollUntil(deadline time.Time, done func() bool) bool {
	wait := time.Millisecond
	for {
		if done() {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		time.Sleep(min(wait, left))
		wait = min(2*wait, 50*time.Millisecond)
	}
}
