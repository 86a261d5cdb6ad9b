package spawn

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Identity names one process for as long as the machine is up: its pid, and when the kernel
// says that pid started. A pid alone is recycled; the pair is not, so a row whose pair no
// longer matches is stale and is never signalled (seed 000 §4).
type Identity struct {
	// Pid is the process id, which is also the id of its process group and session.
	Pid int
	// StartTime is field 22 of /proc/<pid>/stat: the clock ticks since boot at which the
	// process started.
	StartTime uint64
	// Boot is the kernel's boot id (/proc/sys/kernel/random/boot_id) when the identity was
	// read. Ticks since boot start again at every boot, so a row kept across a reboot could
	// meet a new process with the same pid at the same tick; the boot id tells them apart.
	// An empty Boot (a row stored without one) is not compared.
	Boot string
}

// String renders the identity as "pid 123 (started at tick 456)".
func (id Identity) String() string {
	return fmt.Sprintf("pid %d (started at tick %d)", id.Pid, id.StartTime)
}

// Started returns the wall-clock time the process started: the boot time of /proc/stat
// (btime) plus StartTime in clock ticks. It is for showing; identities are compared in ticks,
// because btime moves when the wall clock is set.
func (id Identity) Started() (time.Time, error) {
	btime, err := bootTime()
	if err != nil {
		return time.Time{}, err
	}
	hz := clockTicks()
	sec := id.StartTime / hz
	frac := time.Duration(id.StartTime%hz) * time.Second / time.Duration(hz)
	return time.Unix(btime+int64(sec), 0).Add(frac), nil
}

// ErrNoProcess is a pid with no process behind it, or only a zombie.
var ErrNoProcess = errors.New("spawn: no such process")

// Lookup reads the identity of the running process pid from /proc. A pid with no process, or
// with a zombie that has exited and not been reaped, is ErrNoProcess.
func Lookup(pid int) (Identity, error) {
	if pid <= 0 {
		return Identity{}, fmt.Errorf("spawn: pid %d: %w", pid, ErrNoProcess)
	}
	st, err := readStat(pid)
	if err != nil || !st.live() {
		return Identity{}, fmt.Errorf("spawn: pid %d: %w", pid, ErrNoProcess)
	}
	return Identity{Pid: pid, StartTime: st.start, Boot: bootID()}, nil
}

// Alive reports whether id's process is running: the pid exists, is not a zombie, started
// at id.StartTime, and (when id.Boot is set) on this boot. A recycled pid is not alive.
func Alive(id Identity) bool {
	if id.Pid <= 0 {
		return false
	}
	if id.Boot != "" && id.Boot != bootID() {
		return false
	}
	st, err := readStat(id.Pid)
	return err == nil && st.live() && st.start == id.StartTime
}

// procStat is what this package reads from /proc/<pid>/stat.
type procStat struct {
	state byte   // field 3: R, S, D, Z, X, …
	pgrp  int    // field 5: the process group
	start uint64 // field 22: start time in clock ticks since boot
}

// live reports whether the process has not exited (a zombie has; so has X, dead).
func (s procStat) live() bool { return s.state != 'Z' && s.state != 'X' && s.state != 'x' }

// readStat reads /proc/<pid>/stat.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// errStat is a /proc/<pid>/stat line that could not be read.
var errStat = errors.New("spawn: malformed /proc stat line")

// parseStat parses a stat line. The command name (field 2) is in parentheses and may itself
// hold spaces and parentheses, so the fields are counted from the last ')'.
func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errStat
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3, so field n is f[n-3].
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, errStat
	}
	pgrp, err := strconv.Atoi(f[2])
	if err != nil {
		return procStat{}, errStat
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procStat{}, errStat
	}
	return procStat{state: f[0][0], pgrp: pgrp, start: start}, nil
}

// groupMembers lists the processes of process group pgid that have not exited, from /proc.
func groupMembers(pgid int) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	_ = d.Close()
	var out []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if st, err := readStat(pid); err == nil && st.pgrp == pgid && st.live() {
			out = append(out, pid)
		}
	}
	return out
}

// bootID returns the kernel's boot id, or "" when it cannot be read.
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})

// bootTime returns btime from /proc/stat: the boot time in seconds since the epoch.
func bootTime() (int64, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, fmt.Errorf("spawn: boot time: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, errors.New("spawn: boot time: no btime in /proc/stat")
}

// atClkTck is AT_CLKTCK, the auxiliary vector entry holding sysconf(_SC_CLK_TCK).
const atClkTck = 17

// clockTicks returns the kernel's clock ticks per second for /proc times (USER_HZ), from the
// auxiliary vector, or 100, its value on every common architecture.
var clockTicks = sync.OnceValue(func() uint64 {
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return 100
	}
	w := int(unsafe.Sizeof(uintptr(0)))
	for i := 0; i+2*w <= len(b); i += 2 * w {
		var k, v uint64
		if w == 8 {
			k, v = binary.NativeEndian.Uint64(b[i:]), binary.NativeEndian.Uint64(b[i+w:])
		} else {
			k, v = uint64(binary.NativeEndian.Uint32(b[i:])), uint64(binary.NativeEndian.Uint32(b[i+w:]))
		}
		if k == atClkTck && v > 0 {
			return v
		}
	}
	return 100
})
