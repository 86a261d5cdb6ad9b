package sandbox

import (
	"fmt"
	"strings"
	"sync"
)

// Quarantined is a place git would take for a repository that a boxed command left in its
// workspace, moved aside so that git, run there by the owner outside any box, does not obey
// it (a config naming core.fsmonitor, a hook, a filter driver would run as the owner).
type Quarantined struct {
	// Path is where it was (absolute).
	Path string
	// What it was: "a .git directory", "a .git file", "a .git link", "a bare repository",
	// "a hooks directory".
	What string
	// Moved is where it is now: the same name with ".quarantined-by-buddi-<time>" added, or
	// for a bare repository its HEAD renamed so (git no longer takes the directory for a
	// repository). Empty when it could not be moved.
	Moved string
	// Err says why it could not be moved, when it could not.
	Err string
}

// Report is what the end of a box found in its workspace.
type Report struct {
	// Quarantined lists what was moved aside (or could not be), in the order found.
	Quarantined []Quarantined
	// Unchecked, when set, says what part of the workspace was not looked at, and why.
	Unchecked string
}

// Empty reports whether there is nothing to tell.
func (r Report) Empty() bool { return len(r.Quarantined) == 0 && r.Unchecked == "" }

// String tells the report in sentences for a tool's result, or "" when there is nothing to tell.
func (r Report) String() string {
	var b strings.Builder
	for _, q := range r.Quarantined {
		if q.Moved != "" {
			fmt.Fprintf(&b, "The command left %s at %s, which git outside the box would obey; buddi moved it to %s. ", q.What, q.Path, q.Moved)
		} else {
			fmt.Fprintf(&b, "The command left %s at %s, which git outside the box would obey, and buddi could not move it (%s): do not run git there until it is removed. ", q.What, q.Path, q.Err)
		}
	}
	if r.Unchecked != "" {
		fmt.Fprintf(&b, "Not all of the workspace was checked for repositories the command may have left (%s). ", r.Unchecked)
	}
	return strings.TrimSpace(b.String())
}

// Launched is a command started in a box by Launch. Its Finish must be called once the
// command has ended (its box ends with it).
type Launched struct {
	finish func() Report
	once   sync.Once
	report Report
}

// Finish ends the box's hold on its workspace, once the command has ended: what the box
// left there that git outside it would obey (a .git entry or a bare repository anywhere in
// the workspace that was not there, the same, when the box was made, and a read-only hooks
// directory that was missing then) is quarantined, and the workspace's .git placeholder is
// let go of. It returns what was found. Calling it again returns the same report.
func (l *Launched) Finish() Report {
	l.once.Do(func() { l.report = l.finish() })
	return l.report
}
