package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Policy is what one boxed command may touch. The zero value is not a policy: Home and
// Workspace are required, and a Policy that fails Validate is never applied.
type Policy struct {
	// Home is buddi's data directory ($BUDDI_HOME): the vault, the CLI token, the database
	// socket, the logs. In the box it is covered by an empty read-only directory and
	// Landlock grants nothing under it. Required, absolute.
	Home string
	// Workspace is the directory the command works in, and the only one of the owner's
	// directories it may write (besides Writable). The command's directory must be inside
	// it. Required, absolute.
	Workspace string
	// GitWritable leaves <Workspace>/.git writable. Only developer.git sets it: it writes
	// the repository through its own hardened git. Otherwise .git is mounted read-only.
	GitWritable bool
	// Writable lists further directories the command may write: the package caches its
	// run list needs (npm's ~/.npm, Go's GOMODCACHE and GOCACHE, pip's ~/.cache/pip). The
	// caller names them; nothing is read from buddi's environment. A missing one is
	// created (mode 0700) before the box is applied.
	Writable []string
	// ReadOnly lists directories or files inside writable places that stay read-only in the
	// box, as .git does (for example a hooks directory). A path that does not exist is
	// skipped: the box cannot keep a command from creating it.
	ReadOnly []string
	// Namespaces lets the boxed program make namespaces of its own, with their id mappings,
	// as a browser's own sandbox does: the box's /proc (its own PID namespace's alone) is
	// writable, within what the kernel's permissions allow the box's account. Only for an
	// account that is not root: the box's uid 0 could write the kernel's settings in
	// /proc/sys, so a launcher running as root refuses it.
	Namespaces bool
	// Hidden lists further paths hidden as Home is, directories or files: a vault kept
	// outside Home, and the owner's own secrets the box should not read (~/.ssh, ~/.aws,
	// ~/.gnupg, ~/.npmrc, ~/.netrc, ~/.config/gh, …). A directory is covered by an empty
	// read-only one, a file by an empty read-only device, and Landlock grants nothing under
	// either. A path that does not exist is skipped.
	Hidden []string
}

// hiddenPaths returns Home and Hidden, the paths the box hides, with what each is.
func (p Policy) hiddenPaths() []keptPath {
	out := []keptPath{{role: "data directory", path: p.Home}}
	for _, h := range p.Hidden {
		out = append(out, keptPath{role: "hidden path", path: h})
	}
	return out
}

// privateDirs get a fresh, empty, writable tmpfs of their own in every box: the command's
// temporary files stay in it, and the sockets other programs keep there (a terminal
// multiplexer, an SSH agent, the X server, the user's and the system's D-Bus, systemd, a
// container engine) cannot be reached. A path of the policy under one of them is mounted
// back in.
var privateDirs = []string{"/tmp", "/var/tmp", "/dev/shm", "/run"}

// systemDirs are never a workspace, a cache or a read-only path of a policy.
var systemDirs = []string{"/proc", "/sys", "/dev"}

// Validate checks the policy's shape without touching the file system: every path absolute
// and clean, Home and Workspace set, and no writable or read-only path equal to Home or a
// Hidden path, inside one or holding one (the box could not then both show the path and
// hide the other). The launcher checks the same again on the real paths, after resolving
// links.
func (p Policy) Validate() error {
	if p.Home == "" {
		return fmt.Errorf("sandbox: the policy names no data directory (Home): set it to buddi's BUDDI_HOME")
	}
	if p.Workspace == "" {
		return fmt.Errorf("sandbox: the policy names no workspace: set Workspace to the directory the command works in")
	}
	hidden := p.hiddenPaths()
	for _, h := range hidden {
		if err := checkPath(h.role, h.path); err != nil {
			return err
		}
		if isSystem(h.path) {
			return fmt.Errorf("sandbox: %s %s is a system directory: name a path of the owner's", h.role, h.path)
		}
	}
	kept := p.kept()
	for _, k := range kept {
		if err := checkPath(k.role, k.path); err != nil {
			return err
		}
		for _, h := range hidden {
			if err := apart(k.role, k.path, h); err != nil {
				return err
			}
		}
		if isSystem(k.path) {
			return fmt.Errorf("sandbox: %s %s is a system directory: name a directory of the owner's", k.role, k.path)
		}
	}
	return nested(kept, func(k keptPath) string { return k.path })
}

// nested refuses a writable path inside another one (the workspace or a Writable entry):
// it adds nothing, and a boxed process could replace it with a link before the next box
// is made, to have that box grant what the link points at.
func nested(kept []keptPath, path func(keptPath) string) error {
	for i, a := range kept {
		for j, b := range kept {
			if i == j || !a.writable || !b.writable || !within(path(a), path(b)) || (path(a) == path(b) && i < j) {
				continue
			}
			return fmt.Errorf("sandbox: %s %s is inside the %s %s, which is writable already: leave it out", a.role, a.path, b.role, b.path)
		}
	}
	return nil
}

// Describe says in one line what the box allows, for the card that shows the command, e.g.
// "sandboxed: writes only to the workspace (.git read-only), a private /tmp and ~/.npm; no
// access to buddi's data or process; network open".
func (p Policy) Describe() string {
	var b strings.Builder
	b.WriteString("sandboxed: writes only to the workspace")
	if !p.GitWritable {
		b.WriteString(" (.git read-only)")
	}
	b.WriteString(", a private /tmp")
	const shown = 3
	for i, w := range p.Writable {
		if i == shown {
			fmt.Fprintf(&b, " and %d more", len(p.Writable)-shown)
			break
		}
		if i == len(p.Writable)-1 && i < shown {
			b.WriteString(" and ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(w)
	}
	b.WriteString("; no access to buddi's data or process")
	for i, h := range p.Hidden {
		if i == shown {
			fmt.Fprintf(&b, " and %d more", len(p.Hidden)-shown)
			break
		}
		switch {
		case i == 0:
			b.WriteString(", nor to ")
		case i == len(p.Hidden)-1:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(h)
	}
	b.WriteString("; network open")
	return b.String()
}

// keptPath is a path of the policy that stays visible in the box.
type keptPath struct {
	role     string // for errors: "workspace", "writable path", "read-only path"
	path     string
	writable bool
}

// kept lists the policy's paths that stay visible: the workspace, Writable, ReadOnly.
func (p Policy) kept() []keptPath {
	out := []keptPath{{role: "workspace", path: p.Workspace, writable: true}}
	for _, w := range p.Writable {
		out = append(out, keptPath{role: "writable path", path: w, writable: true})
	}
	for _, r := range p.ReadOnly {
		out = append(out, keptPath{role: "read-only path", path: r})
	}
	return out
}

// checkPath refuses a path that is empty, relative, not clean, the root, or holds a NUL.
func checkPath(role, path string) error {
	switch {
	case path == "" || !filepath.IsAbs(path):
		return fmt.Errorf("sandbox: %s %q is not an absolute path: give it as one", role, path)
	case filepath.Clean(path) != path:
		return fmt.Errorf("sandbox: %s %q is not clean (it would be %q): give it as that", role, path, filepath.Clean(path))
	case path == "/":
		return fmt.Errorf("sandbox: %s cannot be the root directory: name a directory under it", role)
	case strings.IndexByte(path, 0) >= 0:
		return fmt.Errorf("sandbox: %s %q holds a NUL byte", role, path)
	}
	for _, d := range privateDirs {
		if path == d {
			return fmt.Errorf("sandbox: %s %s is a shared system directory that every box replaces with a private one: name a directory inside it or elsewhere", role, path)
		}
	}
	return nil
}

// apart refuses a path equal to a hidden one, inside it, or holding it.
func apart(role, path string, hidden keptPath) error {
	what := "buddi's data directory"
	if hidden.role != "data directory" {
		what = "the hidden path"
	}
	switch {
	case within(path, hidden.path):
		return fmt.Errorf("sandbox: %s %s is inside %s %s: choose one outside it", role, path, what, hidden.path)
	case within(hidden.path, path):
		return fmt.Errorf("sandbox: %s %s holds %s %s: choose one that does not", role, path, what, hidden.path)
	}
	return nil
}

// within reports whether path is dir or inside it (lexically; both clean and absolute).
func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// isSystem reports whether path is in or under /proc, /sys or /dev.
func isSystem(path string) bool {
	for _, d := range systemDirs {
		if within(path, d) {
			return true
		}
	}
	return false
}

// underPrivate returns the private directory path is strictly inside, or "".
func underPrivate(path string) string {
	for _, d := range privateDirs {
		if path != d && within(path, d) {
			return d
		}
	}
	return ""
}
