package confine

import (
	"errors"
	"fmt"
)

// refusal marks the errors that are a rule saying no rather than a fault of the machine.
type refusal interface {
	error
	refusal()
}

// IsRefusal reports whether err, or an error it wraps, is one of this package's refusals
// (outside the workspace, a symbolic link, a protected path, a path swapped during the open,
// .git, a path through a file, not a regular file). A refusal is an answer for the model and
// the owner; anything else is a fault for the log.
func IsRefusal(err error) bool {
	var r refusal
	return errors.As(err, &r)
}

// OutsideError is a path that resolves outside the workspace: by `..`, or by an absolute
// argument that does not name a place inside it.
type OutsideError struct {
	// Path is the path as it was given.
	Path string
}

// Error returns the refusal as one plain sentence.
func (e *OutsideError) Error() string {
	return fmt.Sprintf("%q is outside the workspace.", e.Path)
}

func (*OutsideError) refusal() {}

// SymlinkError is a path with a symbolic link in it. Any link inside the workspace is
// refused, wherever it points (§9).
type SymlinkError struct {
	// Path is the path as it was given.
	Path string
	// Component is the workspace-relative path of the link.
	Component string
}

// Error returns the refusal as one plain sentence.
func (e *SymlinkError) Error() string {
	return fmt.Sprintf("%q goes through a symbolic link at %q, and links inside the workspace are refused whatever they point at.", e.Path, e.Component)
}

func (*SymlinkError) refusal() {}

// ProtectedError is a path at or under one of the protected paths of §2 (~/.ssh, ~/.aws,
// the shell rc files, buddi's data directory, …), refused even inside a workspace placed
// above it.
type ProtectedError struct {
	// Path is the path as it was given.
	Path string
	// Protected is the protected path it falls under, as the owner would write it (~/.ssh).
	Protected string
}

// Error returns the refusal as one plain sentence.
func (e *ProtectedError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("The workspace is inside %s, which is protected and never read or written.", e.Protected)
	}
	return fmt.Sprintf("%q is inside %s, which is protected and never read or written.", e.Path, e.Protected)
}

func (*ProtectedError) refusal() {}

// SwappedError is a path that changed between the check and the open: what the open
// reached is not what validation saw (a directory swapped for a link, or for another one).
type SwappedError struct {
	// Path is the path as it was given.
	Path string
}

// Error returns the refusal as one plain sentence.
func (e *SwappedError) Error() string {
	return fmt.Sprintf("%q changed between the check and the open, so it was refused.", e.Path)
}

func (*SwappedError) refusal() {}

// GitDirError is a write to a path with a component named .git.
type GitDirError struct {
	// Path is the path as it was given.
	Path string
}

// Error returns the refusal as one plain sentence.
func (e *GitDirError) Error() string {
	return fmt.Sprintf("%q is inside .git, and .git is never written.", e.Path)
}

func (*GitDirError) refusal() {}

// HooksDirError is a write under a directory git runs hooks from: the one core.hooksPath
// names, or a .husky directory. Like .git, it is never written.
type HooksDirError struct {
	// Path is the path as it was given.
	Path string
	// Dir is the hooks directory it falls under.
	Dir string
}

// Error returns the refusal as one plain sentence.
func (e *HooksDirError) Error() string {
	return fmt.Sprintf("%q is inside %s, where git runs hooks from, and like .git it is never written.", e.Path, e.Dir)
}

func (*HooksDirError) refusal() {}

// NotDirError is a path that goes through something that is not a directory.
type NotDirError struct {
	// Path is the path as it was given.
	Path string
	// Component is the workspace-relative path of the component that is not a directory.
	Component string
}

// Error returns the refusal as one plain sentence.
func (e *NotDirError) Error() string {
	return fmt.Sprintf("%q goes through %q, which is not a directory.", e.Path, e.Component)
}

func (*NotDirError) refusal() {}

// NotRegularError is a read or a write of something that is not a regular file: a
// directory, a device, a pipe or a socket.
type NotRegularError struct {
	// Path is the path as it was given.
	Path string
	// Kind names what it is instead ("a directory", "a named pipe", …).
	Kind string
}

// Error returns the refusal as one plain sentence.
func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%q is %s, not a regular file.", e.Path, e.Kind)
}

func (*NotRegularError) refusal() {}
