package seal

import (
	"sync"
	"time"
)

// Stamp spells an instant the way a sealed row keeps it and the database gives it back: UTC,
// to the microsecond (PostgreSQL's timestamptz), so a seal made before a row is written
// checks when the row is read.
func Stamp(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
}

// Why a row is refused, in the words the owner reads.
const (
	// WhyNoSeal is a row that carries no seal: an earlier buddi wrote it, or someone wrote it
	// straight into the database.
	WhyNoSeal = "it carries no seal: an earlier buddi wrote it, or it was written straight into the database"
	// WhyBadSeal is a row whose seal does not match what it says.
	WhyBadSeal = "its seal does not match what it says: it was not written by buddi"
)

// Why says why sum is not the seal of purpose and fields under k ("" when it is): a row
// whose seal does not check is treated as absent by whoever reads it.
func (k Key) Why(sum, purpose string, fields ...string) string {
	switch {
	case sum == "":
		return WhyNoSeal
	case !k.Check(sum, purpose, fields...):
		return WhyBadSeal
	}
	return ""
}

// Refusals remembers which refused rows were reported already, so a forged row read on
// every request is recorded (an event, a log line) once per process, not on every read.
// The zero value is ready; it is safe for concurrent use.
type Refusals struct {
	mu   sync.Mutex
	seen map[string]struct{}
}

// First reports whether the refusal named by what (the row and its seal, say) is seen for
// the first time, and remembers it. At most 4096 are remembered; past that the memory
// starts again, and a refusal may be reported twice.
func (r *Refusals) First(what string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.seen[what]; ok {
		return false
	}
	if r.seen == nil || len(r.seen) >= 4096 {
		r.seen = map[string]struct{}{}
	}
	r.seen[what] = struct{}{}
	return true
}
