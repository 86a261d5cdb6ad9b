package confine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// IsRepository reports whether the workspace is the root of a git repository: it holds a
// .git directory that git would accept (HEAD, objects/ and refs/ in it), or a .git file
// pointing elsewhere ("gitdir: …", a worktree or a submodule). The git tools refuse
// anywhere else (§4): in a workspace that is a folder of several projects, a pathspec or an
// add --all would reach work that is not the workspace's. A .git that is a symbolic link is
// refused with a SymlinkError, like any link in the workspace.
func (r *Root) IsRepository() (bool, error) {
	info, err := os.Lstat(filepath.Join(r.canon, ".git"))
	switch {
	case os.IsNotExist(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("confine: look for .git in the workspace: %w", err)
	case info.Mode()&os.ModeSymlink != 0:
		return false, &SymlinkError{Path: ".git", Component: ".git"}
	}
	return isGitDir(filepath.Join(r.canon, ".git"), info)
}

// EnclosingRepository returns the nearest directory above the workspace that is the root
// of a git repository, or "" when there is none. developer.git init refuses there (§4): a
// repository nested in another is the "somewhere above me" confusion the root check exists
// for. Above the workspace is the owner's own tree, so links there are followed, as git
// follows them when it looks for a repository.
func (r *Root) EnclosingRepository() (string, error) {
	for dir := filepath.Dir(r.canon); ; dir = filepath.Dir(dir) {
		info, err := os.Stat(filepath.Join(dir, ".git"))
		if err == nil {
			ok, err := isGitDir(filepath.Join(dir, ".git"), info)
			if err != nil {
				return "", err
			}
			if ok {
				return dir, nil
			}
		} else if !os.IsNotExist(err) && !os.IsPermission(err) {
			return "", fmt.Errorf("confine: look for a repository above the workspace: %w", err)
		}
		if dir == filepath.Dir(dir) {
			return "", nil
		}
	}
}

// isGitDir reports whether dotgit (described by info) is what git takes for a repository.
func isGitDir(dotgit string, info os.FileInfo) (bool, error) {
	if info.Mode().IsRegular() {
		b := make([]byte, len("gitdir: "))
		f, err := os.Open(dotgit)
		if err != nil {
			return false, fmt.Errorf("confine: read %q: %w", dotgit, err)
		}
		defer f.Close()
		n, _ := f.Read(b)
		return bytes.Equal(b[:n], []byte("gitdir: ")), nil
	}
	if !info.IsDir() {
		return false, nil
	}
	for _, name := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Lstat(filepath.Join(dotgit, name)); err != nil {
			if os.IsNotExist(err) {
				return false, nil
			}
			return false, fmt.Errorf("confine: look in %q: %w", dotgit, err)
		}
	}
	return true, nil
}
