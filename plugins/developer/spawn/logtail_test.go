package spawn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTail(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "p.log")
	content := "line 1\nline 2\nline 3\n" // 21 bytes
	if err := os.WriteFile(logPath, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	utf := filepath.Join(dir, "utf.log")
	if err := os.WriteFile(utf, []byte("aé€x"), 0o600); err != nil { // a, é (2 bytes), € (3 bytes), x
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		path  string
		since int64
		max   int
		want  Chunk
	}{
		{"all", logPath, 0, 0, Chunk{Data: content, Offset: 0, Next: 21}},
		{"since", logPath, 7, 0, Chunk{Data: "line 2\nline 3\n", Offset: 7, Next: 21}},
		{"nothing new", logPath, 21, 0, Chunk{Data: "", Offset: 21, Next: 21}},
		{"bounded, tail kept", logPath, 0, 7, Chunk{Data: "line 3\n", Offset: 14, Next: 21, Dropped: 14}},
		{"bounded from since", logPath, 7, 3, Chunk{Data: " 3\n", Offset: 18, Next: 21, Dropped: 11}},
		{"since beyond the end: the log was replaced", logPath, 500, 0, Chunk{Data: content, Offset: 0, Next: 21}},
		{"negative since", logPath, -5, 0, Chunk{Data: content, Offset: 0, Next: 21}},
		{"a cut rune is dropped", utf, 0, 3, Chunk{Data: "x", Offset: 6, Next: 7, Dropped: 6}},
		{"a whole rune is kept", utf, 0, 4, Chunk{Data: "€x", Offset: 3, Next: 7, Dropped: 3}},
	}
	for _, tt := range tests {
		got, err := Tail(tt.path, tt.since, tt.max)
		if err != nil || got != tt.want {
			t.Errorf("%s: got %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

func TestTailRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "secret")
	if err := os.WriteFile(target, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.log")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, text string
	}{
		{"symbolic link", link, "symbolic link"},
		{"directory", dir, "not a regular file"},
		{"missing", filepath.Join(dir, "missing.log"), "no such file"},
	}
	for _, tt := range tests {
		_, err := Tail(tt.path, 0, 0)
		if err == nil || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.text)
		}
	}
}
