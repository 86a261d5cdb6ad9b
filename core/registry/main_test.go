package registry

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's run when a goroutine is left behind: every tool a test
// abandons is released in that test's cleanup.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
