package spawn

import (
	"bytes"
	"os"
	"strconv"
	"strings"
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
// left of the grace to end too. A boxed child is the first process of its PID namespace,
// which the kernel spares a SIGTERM it has no handler for: once the rest of its group has
// ended, it gets SIGKILL at once, which is what SIGTERM would have done to it anywhere else
// (see termDropped). It returns the signal that was sent last, once the child has exited.
func terminate(pid int, exited <-chan struct{}, grace time.Duration) unix.Signal {
	// Judged before the signal is sent: a program that sets its SIGTERM handler just after a
	// dropped SIGTERM (a Go program starting up) must not wait out the whole grace.
	dropped := termDropped(pid)
	signalOwn(pid, unix.SIGTERM)
	deadline := time.Now().Add(grace)
	wait := time.Millisecond
	for {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		t := time.NewTimer(min(wait, left))
		select {
		case <-exited:
			t.Stop()
			if pollUntil(deadline, func() bool { return len(groupMembers(pid)) == 0 }) {
				return unix.SIGTERM
			}
			signalOwn(pid, unix.SIGKILL)
			return unix.SIGKILL
		case <-t.C:
		}
		if (dropped || termDropped(pid)) && aloneInGroup(pid) {
			break
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
	signalOwn(pid, unix.SIGKILL)
	<-exited
	return unix.SIGKILL
}

// termDropped reports whether pid is the first process of a PID namespace other than ours
// (a boxed command) with no handler for SIGTERM and not ignoring it. The kernel does not
// deliver such a process a signal it has no handler for, SIGKILL apart, so a SIGTERM sent
// to it was dropped: the program (a dev server that never asked for SIGTERM) would have
// ended on it anywhere else.
func termDropped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	var nsInit, handled bool
	const term = 1 << (unix.SIGTERM - 1)
	for line := range bytes.Lines(b) {
		name, value, ok := strings.Cut(strings.TrimSpace(string(line)), ":")
		if !ok {
			continue
		}
		switch name {
		case "NSpid":
			f := strings.Fields(value)
			nsInit = len(f) > 1 && f[len(f)-1] == "1"
		case "SigCgt", "SigIgn":
			mask, err := strconv.ParseUint(strings.TrimSpace(value), 16, 64)
			if err != nil || mask&term != 0 {
				handled = true
			}
		}
	}
	return nsInit && !handled
}

// aloneInGroup reports whether pid is the only live member of its own process group.
func aloneInGroup(pid int) bool {
	m := groupMembers(pid)
	return len(m) == 0 || len(m) == 1 && m[0] == pid
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
