package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"buddi/internal/logfile"
	"buddi/internal/timezone"
)

// writeLog writes lines as buddi serve does, each msg at its time.
func writeLog(t *testing.T, w *logfile.Writer, at time.Time, msg string) {
	t.Helper()
	rec := slog.NewRecord(at, slog.LevelInfo, msg, 0)
	rec.AddAttrs(slog.String("service", "test"))
	if err := slog.NewJSONHandler(w, nil).Handle(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
}

// --since reaches back into the rotated files, oldest first, and drops what is older; the
// lines are the terminal's text unless --json.
func TestLogsSince(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("BUDDI_HOME", home)
	dir := logfile.Dir(home)
	w, err := logfile.Open(dir, logfile.Options{MaxSize: 250, Keep: 5})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, ago := range []int{300, 200, 100, 50, 20, 5} { // minutes ago; two lines a file
		writeLog(t, w, now.Add(-time.Duration(ago)*time.Minute), fmt.Sprintf("line from %d minutes ago", ago))
	}
	w.Close()
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Fatalf("%d log files, the test wants rotated ones", len(ents))
	}

	var out, errb bytes.Buffer
	if code := run([]string{"logs", "--since", "2h"}, &out, &errb); code != 0 {
		t.Fatalf("logs --since 2h: exit %d\n%s", code, errb.String())
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{"100", "50", "20", "5"}
	if len(got) != len(want) {
		t.Fatalf("logs --since 2h printed %d lines, want %d:\n%s", len(got), len(want), out.String())
	}
	for i, l := range got {
		if !strings.HasPrefix(l, "time=") || !strings.Contains(l, `level=INFO msg="line from `+want[i]+` minutes ago" service=test`) {
			t.Errorf("line %d: %q, want the text of the line from %s minutes ago", i, l, want[i])
		}
	}

	out.Reset()
	at := now.Add(-30 * time.Minute).Format("2006-01-02T15:04:05")
	if code := run([]string{"logs", "--json", "--since", at}, &out, &errb); code != 0 {
		t.Fatalf("logs --json --since %s: exit %d\n%s", at, code, errb.String())
	}
	var msgs []string
	for l := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		var rec struct{ Msg string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("--json printed %q", l)
		}
		msgs = append(msgs, rec.Msg)
	}
	if fmt.Sprint(msgs) != "[line from 20 minutes ago line from 5 minutes ago]" {
		t.Errorf("--since %s: %q", at, msgs)
	}

	out.Reset()
	if code := run([]string{"logs"}, &out, &errb); code != 0 || strings.Count(out.String(), "\n") != 6 {
		t.Errorf("logs: exit %d, %d lines, want all 6:\n%s", code, strings.Count(out.String(), "\n"), out.String())
	}

	errb.Reset()
	if code := run([]string{"logs", "--since", "yesterday-ish"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "neither a span") {
		t.Errorf("a bad --since: exit %d, %s", code, errb.String())
	}

	// The owner's zone, saved in the home, is the one --since is read in and the lines are
	// shown in, whatever the machine's (UTC+14 is nobody's machine here).
	if err := timezone.Save(home, "Pacific/Kiritimati"); err != nil {
		t.Fatal(err)
	}
	kiritimati, _ := time.LoadLocation("Pacific/Kiritimati")
	out.Reset()
	at = now.Add(-30 * time.Minute).In(kiritimati).Format("2006-01-02T15:04:05")
	if code := run([]string{"logs", "--since", at}, &out, &errb); code != 0 {
		t.Fatalf("logs --since %s in the owner's zone: exit %d\n%s", at, code, errb.String())
	}
	got = strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(got) != 2 || !strings.Contains(got[0], "line from 20 minutes ago") || !strings.Contains(got[0], "+14:00") {
		t.Errorf("--since %s read in the owner's zone, shown in it:\n%s", at, out.String())
	}
}

// With no log there is one sentence and exit 3, and nothing is started or made.
func TestLogsWithoutALog(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("BUDDI_HOME", home)
	var out, errb bytes.Buffer
	code := run([]string{"logs"}, &out, &errb)
	if code != 3 || out.Len() != 0 || !strings.Contains(errb.String(), "buddi has not run with this home ("+home+")") || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("buddi logs made the home (%v)", err)
	}
}

// -f prints the lines as they are written, across a rotation, and ends at Ctrl-C with 0.
func TestLogsFollow(t *testing.T) {
	t.Parallel()
	home, _, vars := env(t)
	w, err := logfile.Open(logfile.Dir(home), logfile.Options{MaxSize: 150, Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	writeLog(t, w, time.Now(), "first")

	cmd := exec.Command(binary, "logs", "-f")
	cmd.Env = vars
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb lockedBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	expect := func(msg string) {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("buddi logs -f ended before %q: %s", msg, errb.String())
			}
			if !strings.Contains(l, `msg=`+msg+` `) {
				t.Fatalf("got %q, want the line %q", l, msg)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%q was not printed", msg)
		}
	}
	expect("first")
	for i := range 4 { // each line takes the file past its size: it is rotated before the next
		msg := fmt.Sprintf("next-%d", i)
		writeLog(t, w, time.Now(), msg)
		expect(msg)
	}
	if _, err := os.Stat(filepath.Join(logfile.Dir(home), "buddi.log.1")); err != nil {
		t.Errorf("no rotation happened: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("buddi logs -f after Ctrl-C: %v\n%s", err, errb.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("buddi logs -f did not end at Ctrl-C")
	}
}

// A command that opens the database says nothing about starting and stopping postgres at the
// default level (it did for every command); the first start says it creates the database.
// --log-format json prints JSON lines, and --log-level debug still has postgres's start.
func TestLogsCommandsStayQuiet(t *testing.T) {
	t.Parallel()
	_, _, vars := env(t)
	code, _, errOut := runBuddi(t, vars, 2*time.Minute, "db", "migrate")
	if code != 0 {
		t.Fatalf("db migrate: exit %d\n%s", code, errOut)
	}
	if strings.Contains(errOut, "postgres started") || strings.Contains(errOut, "postgres stopped") {
		t.Errorf("db migrate told of postgres starting or stopping:\n%s", errOut)
	}
	if !strings.Contains(errOut, "creating the database (first start, takes a few seconds)…") {
		t.Errorf("the first start did not say it creates the database:\n%s", errOut)
	}
	code, _, errOut = runBuddi(t, vars, 2*time.Minute, "--log-format", "json", "--log-level", "debug", "db", "status")
	if code != 0 {
		t.Fatalf("db status: exit %d\n%s", code, errOut)
	}
	started := false
	for l := range strings.SplitSeq(strings.TrimSpace(errOut), "\n") {
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("--log-format json printed %q", l)
		}
		started = started || (rec.Msg == "postgres started" && rec.Level == "DEBUG")
	}
	if !started {
		t.Errorf("--log-level debug has no postgres started:\n%s", errOut)
	}
}

var readyWord = regexp.MustCompile(`(?i)\bready\b`)

// buddi serve writes its log to <home>/logs as JSON lines, redacted like the terminal's; its
// one info line that says it is ready is there, and River's chatter is not; buddi logs reads it.
func TestLogsServeWritesTheFile(t *testing.T) {
	t.Parallel()
	const key = "BUDDI_VAULT_KEY=aGVsbG8taGVsbG8taGVsbG8taGVsbG8taGVsbG8tISE="
	const secret = "sekrit-7e6f5a4b3c"
	_, port, vars := env(t, key)
	home := filepath.Join(t.TempDir(), secret, "home") // serve logs the path as it creates the database
	vars = append(vars, "BUDDI_HOME="+home)
	if code, _, errOut := runWithInput(t, vars, secret, "vault", "set", "DB_PASSWORD"); code != 0 {
		t.Fatalf("vault set: %s", errOut)
	}
	s := startServe(t, home, port, vars)
	s.health()
	waitFor(t, "the ready line", 60*time.Second, func() bool { return strings.Contains(s.log.String(), "buddi is ready at") })
	if code := s.stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	terminal := s.log.String()
	ready := 0
	for l := range strings.SplitSeq(terminal, "\n") {
		if strings.Contains(l, "level=INFO") && readyWord.MatchString(l) {
			ready++
		}
	}
	if ready != 1 {
		t.Errorf("%d info lines say buddi is ready, want 1:\n%s", ready, terminal)
	}
	for _, quiet := range []string{"postgres started", "River client started", "Producer job counts", "migration completed", "no migrations to run"} {
		if strings.Contains(terminal, quiet) {
			t.Errorf("%q at info:\n%s", quiet, terminal)
		}
	}
	for _, step := range []string{"creating the database (first start, takes a few seconds)…", "applying migrations…", "applied migrations"} {
		if !strings.Contains(terminal, step) {
			t.Errorf("the first start does not say %q:\n%s", step, terminal)
		}
	}

	dir := logfile.Dir(home)
	file, err := os.ReadFile(filepath.Join(dir, logfile.Name))
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, logfile.Name)); fi.Mode().Perm() != 0o600 {
		t.Errorf("log file mode %v, want 0600", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("logs directory mode %v, want 0700", fi.Mode().Perm())
	}
	if bytes.Contains(file, []byte(secret)) {
		t.Errorf("the secret reached the log file:\n%s", file)
	}
	if !bytes.Contains(file, []byte("‹secret:DB_PASSWORD›")) {
		t.Errorf("the log file does not show the path redacted:\n%s", file)
	}
	for l := range bytes.SplitSeq(bytes.TrimSpace(file), []byte("\n")) {
		if !json.Valid(l) {
			t.Fatalf("not a JSON line: %s", l)
		}
	}

	code, out, errOut := runBuddi(t, vars, time.Minute, "logs")
	if code != 0 || !strings.Contains(out, "level=INFO msg=\"buddi is ready at http://") || strings.Contains(out, secret) {
		t.Errorf("buddi logs: exit %d\n%s%s", code, out, errOut)
	}
}

// Why serve did not start is in the file too (a service's owner reads it with buddi logs).
func TestLogsServeFailureInTheFile(t *testing.T) {
	t.Parallel()
	home, port, vars := env(t)
	listenerOn(t, port)
	code, _, errOut := runBuddi(t, vars, time.Minute, "serve")
	if code == 0 {
		t.Fatalf("serve on a taken port: exit 0\n%s", errOut)
	}
	file, err := os.ReadFile(filepath.Join(logfile.Dir(home), logfile.Name))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct{ Level, Msg, Err string }
	lines := bytes.Split(bytes.TrimSpace(file), []byte("\n"))
	if err := json.Unmarshal(lines[len(lines)-1], &rec); err != nil || rec.Level != "ERROR" || rec.Msg != "buddi stopped" || !strings.Contains(rec.Err, strconv.Itoa(port)) {
		t.Errorf("the file's last line is not why serve stopped (%v):\n%s\nterminal:\n%s", err, file, errOut)
	}
}
