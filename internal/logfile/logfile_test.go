package logfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestWriterRotatesAndKeepsN(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "logs")
	w, err := Open(dir, Options{MaxSize: 100, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	line := []byte(strings.Repeat("x", 39) + "\n") // 40 bytes: two lines a file
	for i := range 9 {
		line[0] = byte('a' + i)
		if _, err := w.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	names := listDir(t, dir)
	if want := []string{"buddi.log", "buddi.log.1", "buddi.log.2"}; !slices.Equal(names, want) {
		t.Fatalf("files %v, want %v", names, want)
	}
	// 9 lines, two a file: a b | c d | e f | g h | i; the two newest old files are kept.
	for name, want := range map[string]string{"buddi.log": "i", "buddi.log.1": "gh", "buddi.log.2": "ef"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var firsts string
		for l := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
			firsts += l[:1]
		}
		if firsts != want {
			t.Errorf("%s holds lines %q, want %q", name, firsts, want)
		}
		if fi, _ := os.Stat(filepath.Join(dir, name)); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("logs directory mode %v, want 0700", fi.Mode().Perm())
	}
}

func TestOpenMakesAnExistingFilePrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, Name), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if fi, _ := os.Stat(filepath.Join(dir, Name)); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", fi.Mode().Perm())
	}
}

func TestOpenRefusesALink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, filepath.Join(dir, Name)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); err == nil {
		t.Fatal("opened a log file that is a link")
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link's target was made: %v", err)
	}
}

func TestTeeWritesJSONAtTheTerminalsLevel(t *testing.T) {
	t.Parallel()
	var term, file bytes.Buffer
	log := slog.New(Tee(slog.NewTextHandler(&term, &slog.HandlerOptions{Level: slog.LevelInfo}), &file))
	log = log.With("service", "queue")
	log.Debug("chatter")
	log.Info("ready", "n", 3)
	lines := strings.Split(strings.TrimSpace(file.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("file lines %q, want one", lines)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("not JSON: %q", lines[0])
	}
	if rec["msg"] != "ready" || rec["service"] != "queue" || rec["n"] != 3.0 {
		t.Errorf("file line %v", rec)
	}
	if !strings.Contains(term.String(), "msg=ready") || strings.Contains(term.String(), "chatter") {
		t.Errorf("terminal %q", term.String())
	}
}

// writeLines writes JSON lines a minute apart from start through a handler, as serve does.
func writeLines(t *testing.T, w *Writer, start time.Time, msgs ...string) {
	t.Helper()
	h := slog.NewJSONHandler(w, nil)
	for i, m := range msgs {
		rec := slog.NewRecord(start.Add(time.Duration(i)*time.Minute), slog.LevelInfo, m, 0)
		if err := h.Handle(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadGivesFilesOldestFirstFromATime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := Open(dir, Options{MaxSize: 150, Keep: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	start := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	var msgs []string
	for i := range 10 {
		msgs = append(msgs, fmt.Sprintf("line %d", i))
	}
	writeLines(t, w, start, msgs...)
	if n := len(listDir(t, dir)); n < 3 {
		t.Fatalf("only %d files: the test wants rotated ones", n)
	}
	// Rotated files carry the time of their last line, as they would have.
	for _, name := range listDir(t, dir) {
		p := filepath.Join(dir, name)
		b, _ := os.ReadFile(p)
		ls := strings.Split(strings.TrimSpace(string(b)), "\n")
		at, _ := lineTime([]byte(ls[len(ls)-1]))
		_ = os.Chtimes(p, at, at)
	}
	got := readAll(t, dir, ReadOptions{})
	if !slices.Equal(got, msgs) {
		t.Errorf("all: %q, want %q", got, msgs)
	}
	got = readAll(t, dir, ReadOptions{Since: start.Add(7 * time.Minute)})
	if want := msgs[7:]; !slices.Equal(got, want) {
		t.Errorf("since 08:07: %q, want %q", got, want)
	}
}

func TestReadWithoutALog(t *testing.T) {
	t.Parallel()
	err := Read(context.Background(), filepath.Join(t.TempDir(), "logs"), ReadOptions{}, func([]byte) error { return nil })
	if !errors.Is(err, ErrNoLog) {
		t.Errorf("err %v, want ErrNoLog", err)
	}
}

func TestFollowAcrossRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := Open(dir, Options{MaxSize: 150, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	start := time.Now().UTC()
	writeLines(t, w, start, "before")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines := make(chan string, 100)
	done := make(chan error, 1)
	go func() {
		done <- Read(ctx, dir, ReadOptions{Follow: true}, func(l []byte) error {
			rec, _ := record(l, time.UTC)
			lines <- rec.Message
			return nil
		})
	}()
	expect := func(want string) {
		t.Helper()
		select {
		case got := <-lines:
			if got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
		case err := <-done:
			t.Fatalf("Read returned %v before %q", err, want)
		case <-time.After(10 * time.Second):
			t.Fatalf("%q did not come", want)
		}
	}
	expect("before")
	// Each line about 90 bytes: every second one rotates the file.
	for i := range 5 {
		m := fmt.Sprintf("after %d", i)
		writeLines(t, w, start, m)
		expect(m)
	}
	if n := len(listDir(t, dir)); n != 3 {
		t.Errorf("%d files, want the current and two rotated", n)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Read after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read did not end with its context")
	}
}

func TestRenderIsTheTerminalsText(t *testing.T) {
	t.Parallel()
	line := []byte(`{"time":"2026-12-02T08:00:01.5Z","level":"WARN","msg":"postgres did not stop","service":"pgcluster","pid":42,"nested":{"a":true,"b":null},"list":[1,2]}`)
	var out bytes.Buffer
	r := NewRenderer(&out, nil)
	if err := r.Line(line); err != nil {
		t.Fatal(err)
	}
	if err := r.Line([]byte("not json")); err != nil {
		t.Fatal(err)
	}
	want := `level=WARN msg="postgres did not stop" service=pgcluster pid=42 nested.a=true nested.b=<nil> list=[1,2]` + "\nnot json\n"
	got := out.String()
	if i := strings.Index(got, " "); i < 0 || !strings.HasPrefix(got, "time=") || got[i+1:] != want {
		t.Errorf("got %q, want time=… %q", got, want)
	}
}

func readAll(t *testing.T, dir string, opts ReadOptions) []string {
	t.Helper()
	var got []string
	err := Read(context.Background(), dir, opts, func(l []byte) error {
		rec, ok := record(l, time.UTC)
		if !ok {
			t.Fatalf("not a record: %q", l)
		}
		got = append(got, rec.Message)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// The ready line's sign-in ticket reaches the terminal and never the file.
func TestTeeKeepsNoTicket(t *testing.T) {
	var term, file bytes.Buffer
	log := slog.New(Tee(slog.NewTextHandler(&term, nil), &file))
	const ticket = "Zm9vYmFyLXNpZ24taW4tdGlja2V0LXZhbHVl_-x"
	log.Info("buddi is ready at http://127.0.0.1:4317/ (sign in within 15 minutes: http://127.0.0.1:4317/auth?ticket=" + ticket + " ; later, …)")
	log.Warn("sign-in", "link", "https://buddi.example.ts.net/auth?next=%2F&ticket="+ticket)
	if !strings.Contains(term.String(), ticket) {
		t.Errorf("the terminal lost the ticket:\n%s", term.String())
	}
	if strings.Contains(file.String(), ticket) || strings.Count(file.String(), "ticket=‹not kept›") != 2 {
		t.Errorf("the file:\n%s", file.String())
	}
}
