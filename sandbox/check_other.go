//go:build !linux

package sandbox

import (
	"os/exec"
	"runtime"
)

// Check reports whether a box can be made on this machine: on this system never, since the
// box is made of Linux's Landlock and mount namespaces.
func Check() error {
	return &UnavailableError{Reason: "the box needs Linux (Landlock and mount namespaces) and this is " + runtime.GOOS}
}

// Start refuses: no box can be made on this system, and nothing runs unboxed in its place.
func Start(cmd *exec.Cmd, p Policy) error { return Check() }

// Launch refuses: no box can be made on this system, and nothing runs unboxed in its place.
func Launch(cmd *exec.Cmd, p Policy) (*Launched, error) { return nil, Check() }
