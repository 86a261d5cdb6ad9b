package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// HooksLookup says where git runs hooks from in the repository whose working tree is the
// directory repo (absolute): the directory, absolute or relative to repo, as the owner's
// own git reports it (core.hooksPath, else .git/hooks). "" means none beyond .git. An error
// means it could not be told, and a write there is refused.
type HooksLookup func(repo string) (string, error)

// hooks is a Root's lookup and what it answered, once per repository.
type hooks struct {
	lookup HooksLookup
	mu     sync.Mutex
	dirs   map[string]hooksAnswer
}

// hooksAnswer is one repository's hooks directory, in each of its spellings, or why there
// is none.
type hooksAnswer struct {
	dirs []string
	err  error
}

// WithHooks returns a Root like r that also never writes under the directory git runs
// hooks from in the repository holding the path, as lookup reports it: a hook there is
// code the owner's own git runs, as a file in .git/hooks is. lookup is asked at most once
// per repository for the Root returned. Every Root refuses writes under a directory named
// .husky, whose scripts a husky hook runs, lookup or not.
func (r *Root) WithHooks(lookup HooksLookup) *Root {
	c := *r
	c.hooks = &hooks{lookup: lookup, dirs: map[string]hooksAnswer{}}
	return &c
}

// InHooks reports whether p is under a directory git runs hooks from (see WithHooks), and
// which: a component named .husky, at any depth and in any case, or the nearest
// repository's hooks directory, the repository being the nearest directory at or above
// p's own that holds a .git (inside the workspace or above it). An error is a lookup that
// failed: the caller refuses.
func (r *Root) InHooks(p Path) (dir string, in bool, err error) {
	for i, c := range p.comps {
		if isHuskyName(c) {
			return filepath.Join(r.canon, strings.Join(p.comps[:i+1], "/")), true, nil
		}
	}
	if r.hooks == nil {
		return "", false, nil
	}
	repo, err := r.repositoryOf(p)
	if err != nil || repo == "" {
		return "", false, err
	}
	dirs, err := r.hooks.dirsOf(repo)
	if err != nil {
		return "", false, fmt.Errorf("confine: where git runs hooks from in %s: %w", repo, err)
	}
	for _, d := range dirs {
		if within(p.Abs, d) {
			return d, true, nil
		}
	}
	return "", false, nil
}

// repositoryOf returns the working tree of the nearest repository holding p: the nearest
// directory that holds a .git entry, from p's own directory (p itself when it is one) up
// to the workspace, then above it. "" when there is none.
func (r *Root) repositoryOf(p Path) (string, error) {
	dir := p.Abs
	if !p.Exists || !p.Mode.IsDir() {
		dir = filepath.Dir(p.Abs)
	}
	for within(dir, r.canon) {
		switch _, err := os.Lstat(filepath.Join(dir, ".git")); {
		case err == nil:
			return dir, nil
		case !os.IsNotExist(err) && !errors.Is(err, unix.ENOTDIR):
			return "", fmt.Errorf("confine: look for .git in %q: %w", dir, err)
		}
		if dir == r.canon {
			break
		}
		dir = filepath.Dir(dir)
	}
	return r.EnclosingRepository()
}

// dirsOf asks the lookup about repo once.
func (h *hooks) dirsOf(repo string) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if a, ok := h.dirs[repo]; ok {
		return a.dirs, a.err
	}
	var a hooksAnswer
	d, err := h.lookup(repo)
	switch {
	case err != nil:
		a.err = err
	case d == "":
	default:
		if !filepath.IsAbs(d) {
			d = filepath.Join(repo, d)
		}
		a.dirs = spellings(d)
	}
	h.dirs[repo] = a
	return a.dirs, a.err
}

// isHuskyName reports whether a component names husky's directory of hook scripts.
func isHuskyName(c string) bool { return strings.EqualFold(c, ".husky") }

// hookManagerFiles are the files hook managers read, when git runs the hook they installed,
// for the commands to run: lefthook, pre-commit, overcommit, husky 4.
var hookManagerFiles = []string{
	"lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml",
	"lefthook-local.yml", "lefthook-local.yaml", ".lefthook-local.yml", ".lefthook-local.yaml",
	".pre-commit-config.yaml", ".pre-commit-config.yml", ".overcommit.yml",
	".huskyrc", ".huskyrc.json", ".huskyrc.js", ".huskyrc.yaml", ".huskyrc.yml", "husky.config.js",
}

// display names an absolute path for a refusal: relative to the workspace when inside it.
func (r *Root) display(abs string) string {
	if abs == r.canon {
		return "the workspace"
	}
	if within(abs, r.canon) {
		return abs[len(r.canon)+1:]
	}
	return abs
}
