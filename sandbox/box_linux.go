package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// box is a launch with its paths resolved on the real file system, before anything is
// mounted: what the mounts and the Landlock rules are made from.
type box struct {
	l launch
	// homes is Home's real path, and Home as given when a link makes it differ.
	homes []string
	// kept are the policy's paths that exist, by their real paths.
	kept []realPath
	// dir is the command's directory, real, inside the workspace.
	dir string
	// workspace is the workspace's real path.
	workspace string
	// program is the file to exec: as given, or its real path when either lies under a
	// private directory (the real file is then mounted back in at that path).
	program string
	// files are single files under a private directory to mount back in, read-only: the
	// program, and the file /etc/resolv.conf leads to.
	files []string
}

// realPath is a kept path resolved.
type realPath struct {
	keptPath
	real string
}

// prepare resolves the launch's paths: Home, the kept paths (creating a missing writable
// one other than the workspace), the directory, the program. It refuses a real path that
// breaks the policy's rules, which links could hide from Validate.
func prepare(l launch) (*box, error) {
	b := &box{l: l}
	home, err := filepath.EvalSymlinks(l.Policy.Home)
	switch {
	case err == nil:
		b.homes = append(b.homes, home)
		if home != l.Policy.Home {
			b.homes = append(b.homes, l.Policy.Home)
		}
	case errors.Is(err, fs.ErrNotExist):
		b.homes = []string{l.Policy.Home}
	default:
		return nil, fmt.Errorf("resolve the data directory %s: %w", l.Policy.Home, err)
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
		real, err := filepath.EvalSymlinks(k.path)
		if err != nil {
			return nil, fmt.Errorf("resolve the %s %s: %w", k.role, k.path, err)
		}
		if err := checkPath(k.role+" (through its links)", real); err != nil {
			return nil, err
		}
		if isSystem(real) {
			return nil, fmt.Errorf("the %s %s leads to the system directory %s", k.role, k.path, real)
		}
		for _, h := range b.homes {
			if err := apart(k.role+" (through its links)", real, h); err != nil {
				return nil, err
			}
		}
		if k.writable {
			if fi, err := os.Stat(real); err != nil {
				return nil, err
			} else if !fi.IsDir() {
				return nil, fmt.Errorf("the %s %s is not a directory", k.role, k.path)
			}
		}
		if k.role == "workspace" {
			b.workspace = real
		}
		b.kept = append(b.kept, realPath{keptPath: k, real: real})
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
		prog, err := filepath.EvalSymlinks(l.Path)
		if err != nil {
			return nil, fmt.Errorf("resolve the program %s: %w", l.Path, err)
		}
		b.program = l.Path
		if underPrivate(l.Path) != "" || underPrivate(prog) != "" {
			b.program = prog
			if underPrivate(prog) != "" {
				b.files = append(b.files, prog)
			}
		}
	}
	if conf, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && underPrivate(conf) != "" {
		b.files = append(b.files, conf)
	}
	return b, nil
}

// writable lists the real directories the command may write: the workspace, the policy's
// Writable.
func (b *box) writable() []string {
	var out []string
	for _, k := range b.kept {
		if k.writable {
			out = append(out, k.real)
		}
	}
	return out
}

// hidden lists the real paths Landlock grants nothing under: Home (both spellings).
func (b *box) hidden() []string { return slices.Clone(b.homes) }
