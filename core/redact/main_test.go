package redact

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's run when a goroutine is left behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
