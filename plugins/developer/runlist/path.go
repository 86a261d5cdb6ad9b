package runlist

import (
	"path/filepath"
	"strings"
)

// This file is §5 item 3, lexically: "Every path — operand or flag value — resolves inside
// the workspace: not absolute, no .., no ~, no symlink component, and resolved against the
// directory the command will run in (cwd, itself resolved inside the workspace)". The
// symlink walk needs the filesystem and is the confinement package's; a ~ never reaches
// here, since it makes a command not plain.

// place is where a command runs: the workspace and the directory inside it.
type place struct {
	// workspace is the cleaned absolute workspace root.
	workspace string
	// rel is the run directory relative to the workspace, slash-separated, "." for the root.
	rel string
	// protected are cleaned absolute paths refused even inside the workspace (§2).
	protected []string
}

// dir returns the absolute run directory.
func (p place) dir() string {
	if p.rel == "." {
		return p.workspace
	}
	return filepath.Join(p.workspace, filepath.FromSlash(p.rel))
}

// resolveCwd places cwd inside workspace: "" is the root, a relative cwd is read against
// the workspace, an absolute one must lie inside it. ok is false when it resolves outside.
func resolveCwd(workspace, cwd string) (rel string, ok bool) {
	if cwd == "" {
		return ".", true
	}
	var abs string
	if filepath.IsAbs(cwd) {
		abs = filepath.Clean(cwd)
	} else {
		abs = filepath.Join(workspace, cwd)
	}
	r, ok := within(workspace, abs)
	if !ok {
		return "", false
	}
	return r, true
}

// within reports whether the cleaned absolute path abs is root or below it, and abs
// relative to root ("." for root itself).
func within(root, abs string) (string, bool) {
	if abs == root {
		return ".", true
	}
	prefix := root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if !strings.HasPrefix(abs, prefix) {
		return "", false
	}
	return filepath.ToSlash(abs[len(prefix):]), true
}

// protectedBy returns the protected path that holds abs, or "".
func (p place) protectedBy(abs string) string {
	for _, pr := range p.protected {
		if _, ok := within(pr, abs); ok {
			return pr
		}
	}
	return ""
}

// pathProblem is why a path word does not resolve inside the workspace.
type pathProblem uint8

const (
	pathOK pathProblem = iota
	pathAbsolute
	pathClimbs
	pathProtected
)

// checkPath reads word as a path against the run directory, lexically. It returns the
// protected path it falls in when the problem is pathProtected.
func (p place) checkPath(word string) (pathProblem, string) {
	if strings.HasPrefix(word, "/") {
		return pathAbsolute, ""
	}
	if climbs(word) {
		return pathClimbs, ""
	}
	if pr := p.protectedBy(p.abs(word)); pr != "" {
		return pathProtected, pr
	}
	return pathOK, ""
}

// abs joins a relative word onto the run directory.
func (p place) abs(word string) string {
	return filepath.Join(p.dir(), filepath.FromSlash(word))
}

// climbs reports whether a slash-separated word has a ".." component.
func climbs(word string) bool {
	for part := range strings.SplitSeq(word, "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

// HomeProtected returns the paths under home that §2 refuses "even when a workspace is
// placed above them": ~/.ssh, ~/.aws, ~/.gnupg, ~/.npmrc, ~/.netrc, ~/.gitconfig,
// ~/.config/gh, the shell rc files, ~/Library/Keychains and ~/.buddi. The caller adds buddi's
// data directory and the vault, whose places it knows, and passes the lot as
// Input.Protected.
func HomeProtected(home string) []string {
	if home == "" || !filepath.IsAbs(home) {
		return nil
	}
	rel := []string{
		".ssh", ".aws", ".gnupg", ".npmrc", ".netrc", ".gitconfig", ".config/gh",
		".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
		".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout",
		".cshrc", ".tcshrc", ".kshrc", ".mkshrc", ".config/fish",
		"Library/Keychains", ".buddi",
	}
	out := make([]string, len(rel))
	for i, r := range rel {
		out[i] = filepath.Join(home, filepath.FromSlash(r))
	}
	return out
}
