package spawn

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// startHelper starts spec, logging to a file in a temporary directory, and stops it when
// the test ends.
func startHelper(t *testing.T, spec Spec) (*Process, string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "dev.server.log")
	p, err := Start(spec, logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(100 * time.Millisecond); err != nil {
			t.Errorf("cleanup stop: %v", err)
		}
	})
	return p, logPath
}

// statStart reads field 22 of /proc/<pid>/stat, apart from the package's own reader.
func statStart(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+2:])[19]
}

func TestStartIdentityAliveStop(t *testing.T) {
	t.Parallel()
	spec := helperSpec(t, "term-ok")
	ready := withFIFO(t, &spec)
	p, logPath := startHelper(t, spec)
	id := p.Identity()
	if pids := ready(); pids[0] != id.Pid {
		t.Fatalf("helper said pid %d, identity says %d", pids[0], id.Pid)
	}
	if got := statStart(t, id.Pid); got != strconv.Itoa(int(id.StartTime)) {
		t.Errorf("identity start time %d, /proc says %s", id.StartTime, got)
	}
	if looked, err := Lookup(id.Pid); err != nil || looked != id {
		t.Errorf("Lookup = %v, %v; want %v", looked, err, id)
	}
	if started, err := id.Started(); err != nil || time.Since(started) > time.Minute || time.Until(started) > 2*time.Second {
		t.Errorf("Started() = %v, %v; want about now", started, err)
	}

	stale := []struct {
		name string
		id   Identity
	}{
		{"recycled pid: another start time", Identity{Pid: id.Pid, StartTime: id.StartTime + 1, Boot: id.Boot}},
		{"earlier start time", Identity{Pid: id.Pid, StartTime: id.StartTime - 1}},
		{"another boot", Identity{Pid: id.Pid, StartTime: id.StartTime, Boot: "00000000-0000-0000-0000-000000000000"}},
		{"pid 0", Identity{}},
		{"pid 1", Identity{Pid: 1, StartTime: id.StartTime}},
		{"this process", Identity{Pid: os.Getpid(), StartTime: mustLookup(t, os.Getpid()).StartTime}},
	}
	for _, s := range stale {
		if s.name != "this process" && Alive(s.id) {
			t.Errorf("%s: alive", s.name)
		}
		if err := Stop(s.id, time.Second); !errors.Is(err, ErrStale) {
			t.Errorf("%s: Stop = %v, want ErrStale", s.name, err)
		}
	}
	if !Alive(id) || !Alive(Identity{Pid: id.Pid, StartTime: id.StartTime}) {
		t.Fatal("a stale Stop reached the process")
	}

	if err := Stop(id, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if ex := p.Exit(); ex.Code != 0 || ex.Signal != 0 {
		t.Errorf("got exit %+v, want 0 (it handles SIGTERM)", ex)
	}
	if Alive(id) {
		t.Error("alive after Stop")
	}
	if err := Stop(id, time.Second); !errors.Is(err, ErrStale) {
		t.Errorf("second Stop = %v, want ErrStale", err)
	}
	if _, err := Lookup(id.Pid); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Lookup after exit = %v, want ErrNoProcess", err)
	}
	c, err := Tail(logPath, 0, 0)
	if err != nil || c.Data != "got SIGTERM\n" {
		t.Errorf("log %q, %v", c.Data, err)
	}
}

func mustLookup(t *testing.T, pid int) Identity {
	t.Helper()
	id, err := Lookup(pid)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestStopKillsTheGroup: a process and its child that both ignore SIGTERM are killed after
// the grace.
func TestStopKillsTheGroup(t *testing.T) {
	t.Parallel()
	spec := helperSpec(t, "stubborn")
	ready := withFIFO(t, &spec)
	p, _ := startHelper(t, spec)
	pids := ready()
	if err := p.Stop(100 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if ex := p.Exit(); ex.Signal != syscall.SIGKILL {
		t.Errorf("got exit %+v, want SIGKILL", ex)
	}
	waitGoneT(t, p.Identity().Pid, pids...)
}

// TestStartedProcessExitsLeavingAChild: what a process leaves in its group when it exits by
// itself is stopped before it is reaped.
func TestStartedProcessExitsLeavingAChild(t *testing.T) {
	t.Parallel()
	token := newToken(t)
	p, logPath := startHelper(t, helperSpec(t, "leave", token))
	<-p.Done()
	c, err := Tail(logPath, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Data, "child ") {
		t.Fatalf("log %q", c.Data)
	}
	if ex := p.Exit(); ex.Code != 0 {
		t.Errorf("got exit %+v", ex)
	}
	waitGoneT(t, p.Identity().Pid)
	waitUnmarked(t, token)
}

func TestStartLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t.Run("appends, and makes the log 0600", func(t *testing.T) {
		t.Parallel()
		logPath := filepath.Join(dir, "append.log")
		if err := os.WriteFile(logPath, []byte("before\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := Start(helperSpec(t, "exit", "0", "after"), logPath)
		if err != nil {
			t.Fatal(err)
		}
		<-p.Done()
		b, _ := os.ReadFile(logPath)
		if string(b) != "before\nafter\nerr:after\n" {
			t.Errorf("log %q", b)
		}
		fi, _ := os.Stat(logPath)
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("log mode %v, want 0600", fi.Mode().Perm())
		}
	})
	t.Run("new log is 0600", func(t *testing.T) {
		t.Parallel()
		logPath := filepath.Join(dir, "new.log")
		p, err := Start(helperSpec(t, "exit", "1", "x"), logPath)
		if err != nil {
			t.Fatal(err)
		}
		if ex := p.Exit(); ex.Code != 1 {
			t.Errorf("exit %+v", ex)
		}
		if fi, err := os.Stat(logPath); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("log %v, %v", fi, err)
		}
	})
	refusals := []struct {
		name string
		make func(path string)
		text string
	}{
		{"symbolic link", func(path string) { _ = os.Symlink(filepath.Join(dir, "target"), path) }, "symbolic link"},
		{"FIFO, without blocking", func(path string) { _ = unix.Mkfifo(path, 0o600) }, "not a regular file"},
		{"directory", func(path string) { _ = os.Mkdir(path, 0o700) }, "is a directory"},
		{"missing parent", func(string) {}, "no such file"},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, strings.ReplaceAll(r.name, " ", "-"))
			if r.name == "missing parent" {
				path = filepath.Join(dir, "missing", "x.log")
			}
			r.make(path)
			p, err := Start(helperSpec(t, "exit", "0", "x"), path)
			if err == nil {
				<-p.Done()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), r.text) {
				t.Errorf("got %v, want %q", err, r.text)
			}
			if _, err := os.Stat(filepath.Join(dir, "target")); !os.IsNotExist(err) {
				t.Errorf("the link's target was created: %v", err)
			}
		})
	}
}
