package vault

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's run when a goroutine is left behind (a keychain call that
// outlived its timeout must still end once the keychain answers).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
