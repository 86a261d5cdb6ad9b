package health_test

import (
	"strings"
	"testing"

	"buddi/health"
	"buddi/internal/tmpfs"
)

func TestJudgeDisk(t *testing.T) {
	const gib, mib = 1 << 30, 1 << 20
	for _, c := range []struct {
		name        string
		free, total uint64
		want        string
	}{
		{"nothing free", 0, 100 * gib, health.DiskFull},
		{"a few MiB free", 10 * mib, 100 * gib, health.DiskFull},
		{"just over full", health.DiskFullBelow, 100 * gib, health.DiskLow},
		{"under a GiB on a big disk", 900 * mib, 2000 * gib, health.DiskLow},
		{"3% of a small disk", 3 * gib, 100 * gib, health.DiskLow},
		{"8% of a small disk", 8 * gib, 100 * gib, health.DiskOK},
		{"6 GiB, 1% of a big disk", 6 * gib, 600 * gib, health.DiskOK},
		{"plenty", 400 * gib, 1000 * gib, health.DiskOK},
	} {
		d := health.JudgeDisk("/home/o/.buddi", c.free, c.total)
		if d.State != c.want {
			t.Errorf("%s: %d of %d free is %q, want %q", c.name, c.free, c.total, d.State, c.want)
		}
		if (d.State == health.DiskOK) != (d.Problem == "") || (d.Problem != "" && !strings.Contains(d.Problem, "/home/o/.buddi")) {
			t.Errorf("%s: problem %q for state %q", c.name, d.Problem, d.State)
		}
	}
}

// A real file system filled to the brim is full, and one with room is not.
func TestDiskAtOnARealFullDisk(t *testing.T) {
	dir := tmpfs.Mount(t, 32<<20)
	d, err := health.DiskAt(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.TotalBytes != 32<<20 || d.FreeBytes == 0 || d.State != health.DiskFull { // 32 MiB is under the full mark however empty
		t.Fatalf("an empty 32 MiB tmpfs: %+v", d)
	}
	tmpfs.Fill(t, dir, 0)
	d, err = health.DiskAt(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.FreeBytes != 0 || d.State != health.DiskFull || !strings.Contains(d.Problem, "full (0 bytes free)") {
		t.Fatalf("a filled tmpfs: %+v", d)
	}
}
