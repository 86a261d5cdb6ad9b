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

// Prepared is a command Prepare rewrote; on this system there is none.
type Prepared struct{}

// Prepare refuses, and leaves cmd so that Start refuses it too.
func Prepare(cmd *exec.Cmd, p Policy) (*Prepared, error) {
	err := Check()
	cmd.Err = err
	return nil, err
}

// Started refuses: nothing was prepared.
func (pr *Prepared) Started() (*Launched, error) { return nil, Check() }
