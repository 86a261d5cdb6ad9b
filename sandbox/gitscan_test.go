//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// makeTree lays out files regular files in a tree shaped like a node_modules: packages of
// ten files in three levels of directories, with one nested repository deep inside.
func makeTree(tb testing.TB, root string, files int) {
	tb.Helper()
	for i := 0; i < files/10; i++ {
		dir := filepath.Join(root, "node_modules", fmt.Sprintf("p%d", i%100), fmt.Sprintf("q%d", i/100%10), fmt.Sprintf("r%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		for j := range 10 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.js", j)), nil, 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// BenchmarkScanGit walks a workspace of 100,000 files, as a boxed command's end does.
func BenchmarkScanGit(b *testing.B) {
	root := b.TempDir()
	if d := os.Getenv("BUDDI_SCAN_BENCH_DIR"); d != "" { // a directory on the disk workspaces live on
		root = d
	}
	makeTree(b, root, 100_000)
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(fd)
	b.ResetTimer()
	var s scan
	for b.Loop() {
		s = scanGit(fd)
	}
	b.ReportMetric(float64(s.seen), "entries")
	if s.partial != "" {
		b.Fatal(s.partial)
	}
}
