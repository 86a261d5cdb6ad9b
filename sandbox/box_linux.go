package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// box is a launch with its paths resolved on the real file system, before anything is
// mounted: what the mounts and the Landlock rules are made from. The paths the box mounts
// back in or grants writing to are held open from the moment they are checked, so a link
// swapped in afterwards (by another boxed process writing the same workspace) changes
// nothing: the mounts and the rules use the descriptors, not the names.
type box struct {
	l launch
	// hidden are Home and the policy's Hidden paths: each real path, and the path as given
	// when a link makes it differ. Landlock grants nothing under any of them.
	hidden []keptPath
	// covers are the hidden paths to mount over: the real ones (and those not there now).
	covers []keptPath
	// kept are the policy's paths that exist, each open and checked.
	kept []heldPath
	// dir is the command's directory, real, inside the workspace.
	dir string
	// workspace is the workspace's real path.
	workspace string
	// program is the file to exec: as given, or its real path when either lies under a
	// private directory (the real file is then mounted back in at that path).
	program string
	// files are single files under a private directory to mount back in, read-only: the
	// program, and the file /etc/resolv.conf leads to.
	files []heldPath
}

// heldPath is a path of the box, open (O_PATH) and checked by what the descriptor names.
type heldPath struct {
	keptPath
	real string // the path the descriptor names
	fd   int
	dir  bool
}

// close closes every descriptor the box holds.
func (b *box) close() {
	for _, k := range append(b.kept, b.files...) {
		_ = unix.Close(k.fd)
	}
}

// hold opens path (following links) and returns it with the real path its descriptor names.
func hold(k keptPath) (heldPath, error) {
	fd, err := unix.Open(k.path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return heldPath{}, fmt.Errorf("open the %s %s: %w", k.role, k.path, err)
	}
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err == nil && !filepath.IsAbs(real) {
		err = fmt.Errorf("it resolves to %q, which is not a path", real)
	}
	var st unix.Stat_t
	if err == nil {
		err = unix.Fstat(fd, &st)
	}
	if err != nil {
		_ = unix.Close(fd)
		return heldPath{}, fmt.Errorf("resolve the %s %s: %w", k.role, k.path, err)
	}
	return heldPath{keptPath: k, real: real, fd: fd, dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}, nil
}

// prepare resolves the launch's paths: Home, the kept paths (creating a missing writable
// one other than the workspace), the directory, the program. It refuses a real path that
// breaks the policy's rules, which links could hide from Validate. On an error nothing is
// left open.
func prepare(l launch) (_ *box, err error) {
	b := &box{l: l}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	for _, h := range l.Policy.hiddenPaths() {
		real, err := filepath.EvalSymlinks(h.path)
		switch {
		case err == nil:
			b.hidden = append(b.hidden, keptPath{role: h.role, path: real})
			b.covers = append(b.covers, keptPath{role: h.role, path: real})
			if real != h.path {
				b.hidden = append(b.hidden, h)
			}
		case errors.Is(err, fs.ErrNotExist):
			b.hidden = append(b.hidden, h)
			b.covers = append(b.covers, h)
		default:
			return nil, fmt.Errorf("resolve the %s %s: %w", h.role, h.path, err)
		}
	}
	for _, k := range l.Policy.kept() {
		if _, err := os.Lstat(k.path); errors.Is(err, fs.ErrNotExist) {
			switch k.role {
			case "workspace":
				return nil, fmt.Errorf("the workspace %s does not exist", k.path)
			case "read-only path":
				continue
			}
			if err := os.MkdirAll(k.path, 0o700); err != nil {
				return nil, fmt.Errorf("create the %s %s: %w", k.role, k.path, err)
			}
		}
		h, err := hold(k)
		if err != nil {
			return nil, err
		}
		b.kept = append(b.kept, h)
		if err := b.check(h); err != nil {
			return nil, err
		}
		if k.writable && !h.dir {
			return nil, fmt.Errorf("the %s %s is not a directory", k.role, k.path)
		}
		if k.role == "workspace" {
			b.workspace = h.real
		}
	}
	if err := nested(keptPaths(b.kept), func(k keptPath) string { return k.path }); err != nil {
		return nil, err
	}
	dir, err := filepath.EvalSymlinks(l.Dir)
	if err != nil {
		return nil, fmt.Errorf("resolve the command's directory %s: %w", l.Dir, err)
	}
	if !within(dir, b.workspace) {
		return nil, fmt.Errorf("the command's directory %s is not inside the workspace %s", dir, b.workspace)
	}
	b.dir = dir
	if !l.Probe {
		b.program = l.Path
		if prog, err := filepath.EvalSymlinks(l.Path); err == nil && (underPrivate(l.Path) != "" || underPrivate(prog) != "") {
			h, err := hold(keptPath{role: "program", path: prog})
			if err != nil {
				return nil, err
			}
			b.files = append(b.files, h)
			if err := b.check(h); err != nil {
				return nil, err
			}
			b.program = h.real
		}
	}
	if conf, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && underPrivate(conf) != "" {
		if h, err := hold(keptPath{role: "resolver configuration", path: conf}); err == nil {
			b.files = append(b.files, h)
		}
	}
	return b, nil
}

// check refuses a held path whose real path is not one a box may show: the root, a private
// or system directory, or one that is, holds or lies inside Home or a Hidden path.
func (b *box) check(h heldPath) error {
	if h.role == "program" {
		for _, hid := range b.hidden {
			if within(h.real, hid.path) {
				if hid.role == "data directory" {
					return fmt.Errorf("the program %s is inside buddi's data directory", h.real)
				}
				return fmt.Errorf("the program %s is inside the hidden path %s", h.real, hid.path)
			}
		}
		return nil
	}
	role := h.role + " " + h.path + " (through its links)"
	if err := checkPath(role, h.real); err != nil {
		return err
	}
	if isSystem(h.real) {
		return fmt.Errorf("the %s %s leads to the system directory %s", h.role, h.path, h.real)
	}
	for _, hid := range b.hidden {
		if err := apart(role, h.real, hid); err != nil {
			return err
		}
	}
	return nil
}

// keptPaths returns the held paths as kept paths named by their real paths.
func keptPaths(held []heldPath) []keptPath {
	out := make([]keptPath, len(held))
	for i, h := range held {
		out[i] = h.keptPath
		out[i].path = h.real
	}
	return out
}

// hiddenPaths lists the paths Landlock grants nothing under: Home and Hidden, each both as
// given and real.
func (b *box) hiddenPaths() []string {
	out := make([]string, len(b.hidden))
	for i, h := range b.hidden {
		out[i] = h.path
	}
	return out
}
