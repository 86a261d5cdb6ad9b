package pgcluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// readPid reads the process id on the first line of a postmaster.pid file.
func readPid(path string) (int, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// alive reports whether pid names a process that is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name, which may itself hold spaces.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z' && stat[i+2] != 'X'
	}
	return true
}

// isServerOf reports whether pid is a live postgres serving dataDir, judged by its command
// line, so a pid reused by an unrelated process is never signalled.
func isServerOf(pid int, dataDir string) bool {
	if !alive(pid) {
		return false
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	if len(args) == 0 || filepath.Base(args[0]) != "postgres" {
		return false
	}
	for i, a := range args {
		if a == "-D" && i+1 < len(args) && filepath.Clean(args[i+1]) == filepath.Clean(dataDir) {
			return true
		}
	}
	// The data directory spelled another way (through a link): the postmaster works in its
	// data directory, so its working directory is the same file.
	cwd, err1 := os.Stat(fmt.Sprintf("/proc/%d/cwd", pid))
	data, err2 := os.Stat(dataDir)
	return err1 == nil && err2 == nil && os.SameFile(cwd, data)
}

// RunningPid returns the pid of a live postgres serving the cluster in dir, if any.
func RunningPid(dir string) (int, bool) {
	dataDir := filepath.Join(dir, "data")
	pid, ok := readPid(filepath.Join(dataDir, "postmaster.pid"))
	if !ok || !isServerOf(pid, dataDir) {
		return 0, false
	}
	return pid, true
}

// stopPid stops a server this process did not start: fast shutdown, then immediate, then kill.
func stopPid(ctx context.Context, pid int) error {
	steps := []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{syscall.SIGINT, 10 * time.Second}, {syscall.SIGQUIT, 5 * time.Second}, {syscall.SIGKILL, 5 * time.Second}}
	for _, s := range steps {
		_ = syscall.Kill(pid, s.sig)
		deadline := time.Now().Add(s.wait)
		for time.Now().Before(deadline) {
			if !alive(pid) {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("stop earlier postgres (pid %d): %w", pid, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return fmt.Errorf("earlier postgres (pid %d) did not stop: stop it by hand and start buddi again", pid)
}

// shmOf reads the System V shared memory key and id from a postmaster.pid (its seventh line).
func shmOf(pidFile string) (key, id int, ok bool) {
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, 0, false
	}
	lines := strings.Split(string(raw), "\n")
	if len(lines) < 7 {
		return 0, 0, false
	}
	f := strings.Fields(lines[6])
	if len(f) != 2 {
		return 0, 0, false
	}
	key, err1 := strconv.Atoi(f[0])
	id, err2 := strconv.Atoi(f[1])
	return key, id, err1 == nil && err2 == nil
}

// attachedTo lists the live processes of uid that have the shared memory segment with key
// mapped: the backends of a server whose postmaster died. (Each backend leads its own
// session, so neither the parent nor the process group finds them; the mapping does.) Only
// the server's own account's processes are listed, since the key comes from a file that
// account can write.
func attachedTo(key int, uid uint32) []int {
	mark := []byte(fmt.Sprintf("SYSV%08x", key))
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !alive(pid) {
			continue
		}
		if fi, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			continue
		} else if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != uid {
			continue
		}
		maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
		if err == nil && bytes.Contains(maps, mark) {
			out = append(out, pid)
		}
	}
	return out
}

// awaitDetached waits until no process is attached to the shared memory of the dead server
// that wrote pidFile: a new server refuses to start while one is. Backends notice their
// postmaster's death and leave by themselves; those still there after a grace period are
// told to quit, then killed.
func awaitDetached(ctx context.Context, pidFile string, uid uint32) error {
	key, id, ok := shmOf(pidFile)
	if !ok {
		return nil
	}
	attached := func() bool {
		var desc unix.SysvShmDesc
		if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &desc); err != nil {
			return false // the segment is gone
		}
		if desc.Perm.Uid != uid || desc.Perm.Cuid != uid {
			return false // not the server's segment: nothing of ours to wait for
		}
		return desc.Nattch > 0
	}
	steps := []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{0, 2 * time.Second}, {syscall.SIGQUIT, 3 * time.Second}, {syscall.SIGKILL, 5 * time.Second}}
	for _, st := range steps {
		if st.sig != 0 {
			for _, pid := range attachedTo(key, uid) {
				_ = syscall.Kill(pid, st.sig)
			}
		}
		deadline := time.Now().Add(st.wait)
		for attached() {
			if time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
		if !attached() {
			return nil
		}
	}
	return fmt.Errorf("processes %v still hold the old database server's memory: stop them and start buddi again", attachedTo(key, uid))
}
