package spawn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Errors a ResolveError wraps.
var (
	// ErrNotBare is a program given as a path (it holds a slash) or as no name at all. Only a
	// bare name is looked up, on the captured PATH.
	ErrNotBare = errors.New("spawn: program is not a bare name")
	// ErrNotFound is a bare name with no executable file of that name in any absolute
	// directory of the PATH.
	ErrNotFound = errors.New("spawn: program not found on PATH")
)

// ResolveError is a program that could not be resolved to an absolute file on the PATH.
type ResolveError struct {
	// Program is the name as given.
	Program string
	// Path is the PATH that was searched.
	Path string
	// NotExecutable lists files of that name found on the PATH and skipped because they are
	// not executable regular files.
	NotExecutable []string
	// Err is ErrNotBare or ErrNotFound.
	Err error
}

// Error names the program and the PATH searched in one sentence.
func (e *ResolveError) Error() string {
	if errors.Is(e.Err, ErrNotBare) {
		return fmt.Sprintf("spawn: %q is not a bare program name: only a name is looked up, on the workspace's PATH %q", e.Program, e.Path)
	}
	msg := fmt.Sprintf("spawn: no executable %q in any directory of the workspace's PATH %q", e.Program, e.Path)
	if len(e.NotExecutable) > 0 {
		msg += fmt.Sprintf(" (%s: not an executable file)", strings.Join(e.NotExecutable, ", "))
	}
	return msg
}

// Unwrap returns ErrNotBare or ErrNotFound.
func (e *ResolveError) Unwrap() error { return e.Err }

// Resolve returns the absolute file that program names on path, a PATH value: the first
// executable regular file of that name in an absolute directory of path, as the path it was
// found at (a symbolic link on the PATH is kept as the name the owner's shell would run).
// A program holding a slash, an empty name, "." and ".." are refused with ErrNotBare; empty
// and relative PATH entries are never searched. A file that is there but not executable is
// skipped and named in the error.
func Resolve(program, path string) (string, error) {
	if program == "" || program == "." || program == ".." || strings.ContainsAny(program, "/\x00") {
		return "", &ResolveError{Program: program, Path: path, Err: ErrNotBare}
	}
	var notExec []string
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		full := filepath.Join(dir, program)
		fi, err := os.Stat(full)
		if err != nil {
			continue
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 || unix.Access(full, unix.X_OK) != nil {
			notExec = append(notExec, full)
			continue
		}
		return full, nil
	}
	return "", &ResolveError{Program: program, Path: path, NotExecutable: notExec, Err: ErrNotFound}
}
