package health

import (
	"fmt"

	"buddi/internal/bytesize"
)

// The free space below which a disk is full (writes will fail: PostgreSQL needs room for its
// write-ahead log before it commits anything) and below which it is nearly full.
const (
	// DiskFullBelow is the free space under which the disk counts as full.
	DiskFullBelow = 64 << 20
	// DiskLowBelow is the free space under which the disk is nearly full, whatever its size.
	DiskLowBelow = 1 << 30
	// diskLowShareBelow: a disk with less than this much free is also nearly full when that
	// is under diskLowPercent of it.
	diskLowShareBelow = 5 << 30
	diskLowPercent    = 5
)

// Disk states.
const (
	DiskOK   = "ok"   // room enough
	DiskLow  = "low"  // nearly full: buddi works, not for long
	DiskFull = "full" // full: writes fail
)

// Disk is the free space of the file system that holds buddi's data directory.
type Disk struct {
	Path       string `json:"path"`              // the directory measured: buddi's home
	FreeBytes  uint64 `json:"free_bytes"`        // bytes this account may still write
	TotalBytes uint64 `json:"total_bytes"`       // the file system's size
	State      string `json:"state"`             // DiskOK, DiskLow or DiskFull
	Problem    string `json:"problem,omitempty"` // one sentence when State is not DiskOK
}

// JudgeDisk says what free bytes of total mean for path.
func JudgeDisk(path string, free, total uint64) *Disk {
	d := &Disk{Path: path, FreeBytes: free, TotalBytes: total, State: DiskOK}
	switch {
	case free < DiskFullBelow:
		d.State = DiskFull
		d.Problem = fmt.Sprintf("the disk that holds %s is full (%s free): buddi cannot save anything until you free some space there", path, bytesize.String(free))
	case free < DiskLowBelow || (free < diskLowShareBelow && total > 0 && free*100 < total*diskLowPercent):
		d.State = DiskLow
		d.Problem = fmt.Sprintf("the disk that holds %s is nearly full (%s free of %s): free some space there before buddi's writes fail", path, bytesize.String(free), bytesize.String(total))
	}
	return d
}
