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
	return false
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

// leftoverBackends lists live postgres processes in process group pgid: the backends of a
// server whose postmaster died (it led its own group), which still hold its shared memory.
func leftoverBackends(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if open < 0 || end < open || end+2 >= len(stat) {
			continue
		}
		if comm := string(stat[open+1 : end]); !strings.HasPrefix(comm, "postgres") {
			continue
		}
		// After ")": state, ppid, pgrp.
		fields := strings.Fields(string(stat[end+2:]))
		if len(fields) < 3 || fields[0] == "Z" {
			continue
		}
		if g, err := strconv.Atoi(fields[2]); err == nil && g == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// reapBackends ends what is left of a dead server's process group: an immediate shutdown
// request, then a kill, waiting until none is left.
func reapBackends(ctx context.Context, pgid int) error {
	for _, sig := range []syscall.Signal{syscall.SIGQUIT, syscall.SIGKILL} {
		left := leftoverBackends(pgid)
		if len(left) == 0 {
			return nil
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, sig)
		}
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) && len(leftoverBackends(pgid)) > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	if left := leftoverBackends(pgid); len(left) > 0 {
		return fmt.Errorf("postgres processes %v of a dead server did not stop: stop them by hand and start buddi again", left)
	}
	return nil
}
