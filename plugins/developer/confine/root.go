package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// Options describes what a Root protects besides its own boundary. The zero value protects
// the current user's home paths.
type Options struct {
	// Home is the owner's home directory, whose protected paths (§2: ~/.ssh, ~/.aws, the
	// shell rc files, …) are refused even when the workspace is placed above them.
	// Default: os.UserHomeDir(); New fails when there is none, rather than protect nothing.
	Home string
	// Protected lists further absolute paths refused the same way: buddi's own data
	// directory and the vault. Default: none.
	Protected []string
}

// Root is one workspace directory. It is safe for concurrent use; it holds no descriptor
// between calls (each call opens the root afresh), so it needs no Close. Copy one only
// through WithHooks.
type Root struct {
	named string // the directory as the owner named it, cleaned
	canon string // the same with the links in it resolved: every Abs is under it
	// protected are the absolute paths refused inside the workspace, most specific last.
	protected []protectedPath
	// rootInGit is true when the root itself has a component named .git: then nothing in
	// it is ever written.
	rootInGit bool
	// hooks, when set by WithHooks, says where git runs hooks from in each repository.
	hooks *hooks
	// openat2 is true when the kernel has openat2 (see the package doc). Tests clear it to
	// exercise the component walk.
	openat2 bool

	// afterValidate, when set (tests only), runs between validation and the open, with the
	// workspace-relative path that was validated.
	afterValidate func(rel string)
	// beforeRename, when set (tests only), runs in Write after the temporary file is
	// complete and before it is renamed over the target.
	beforeRename func(rel string)
}

// protectedPath is one refused path: its absolute form and how the owner would write it.
type protectedPath struct {
	abs     string
	display string
}

// homeProtected are the §2 paths under the owner's home, relative to it. The seed names
// ~/.ssh, ~/.aws, ~/.gnupg, ~/.npmrc, ~/.netrc, ~/.gitconfig, ~/.config/gh,
// ~/Library/Keychains and ~/.buddi, and "the owner's shell rc files": read here as every
// file a login or interactive shell of the common shells reads from the home directory at
// start or exit (bash, zsh, sh/dash, ksh/mksh, csh/tcsh), Debian's ~/.bash_aliases (which
// its default ~/.bashrc sources), and fish's ~/.config/fish (config.fish, conf.d/ and
// functions/ all run at start). A file in that list runs as the owner the next time a
// shell starts, which is why it is a way out.
var homeProtected = []string{
	".ssh",
	".aws",
	".gnupg",
	".npmrc",
	".netrc",
	".gitconfig",
	".config/gh",
	"Library/Keychains",
	".buddi",
	// The shell rc files.
	".profile",
	".bashrc",
	".bash_profile",
	".bash_login",
	".bash_logout",
	".bash_aliases",
	".zshenv",
	".zprofile",
	".zshrc",
	".zlogin",
	".zlogout",
	".kshrc",
	".mkshrc",
	".cshrc",
	".tcshrc",
	".login",
	".logout",
	".config/fish",
}

// HomeProtected returns the protected paths of §2 that live under the owner's home,
// relative to it (".ssh", ".config/gh", ".bashrc", …).
func HomeProtected() []string {
	return append([]string(nil), homeProtected...)
}

// New returns the Root for the workspace at dir, which must be an absolute path to an
// existing directory. A workspace that is itself at or inside a protected path is refused
// with a ProtectedError.
func New(dir string, opts Options) (*Root, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("confine: workspace %q is not an absolute path", dir)
	}
	named := filepath.Clean(dir)
	canon, err := filepath.EvalSymlinks(named)
	if err != nil {
		return nil, fmt.Errorf("confine: workspace %q: %w", dir, err)
	}
	info, err := os.Stat(canon)
	if err != nil {
		return nil, fmt.Errorf("confine: workspace %q: %w", dir, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("confine: workspace %q is not a directory", dir)
	}
	home := opts.Home
	if home == "" {
		if home, err = os.UserHomeDir(); err != nil {
			return nil, fmt.Errorf("confine: no home directory to protect: %w", err)
		}
	}
	if !filepath.IsAbs(home) {
		return nil, fmt.Errorf("confine: home %q is not an absolute path", home)
	}
	r := &Root{named: named, canon: canon, openat2: haveOpenat2()}
	for _, h := range spellings(home) {
		for _, rel := range homeProtected {
			r.addProtected(filepath.Join(h, rel), "~/"+rel)
		}
	}
	for _, p := range opts.Protected {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("confine: protected path %q is not absolute", p)
		}
		r.addProtected(filepath.Clean(p), filepath.Clean(p))
	}
	if p, ok := r.protectedAt(canon); ok {
		return nil, &ProtectedError{Protected: p}
	}
	for _, c := range splitComponents(canon) {
		if isGitName(c) {
			r.rootInGit = true
		}
	}
	return r, nil
}

// spellings returns p cleaned and, when it differs, p with its links resolved: a home at
// /home/u that is really /data/u is protected under both.
func spellings(p string) []string {
	p = filepath.Clean(p)
	out := []string{p}
	if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
		out = append(out, real)
	}
	return out
}

// addProtected records abs and, when it exists as a link, what it points at, so that a
// ~/.ssh that is a link to /secure/ssh also protects /secure/ssh inside a workspace there.
// A link made after New is not seen; inside the workspace it is refused as a link anyway.
func (r *Root) addProtected(abs, display string) {
	for _, s := range spellings(abs) {
		dup := false
		for _, p := range r.protected {
			if p.abs == s {
				dup = true
				break
			}
		}
		if !dup {
			r.protected = append(r.protected, protectedPath{abs: s, display: display})
		}
	}
}

// protectedAt reports the protected path that abs is at or under, as the owner would write
// it.
func (r *Root) protectedAt(abs string) (string, bool) {
	for _, p := range r.protected {
		if within(abs, p.abs) {
			return p.display, true
		}
	}
	return "", false
}

// within reports whether abs is dir or under it; both are clean and absolute.
func within(abs, dir string) bool {
	if dir == "/" {
		return true
	}
	return abs == dir || len(abs) > len(dir) && abs[len(dir)] == '/' && abs[:len(dir)] == dir
}

// Dir returns the workspace directory with the links in its own path resolved: every
// Path.Abs is under it.
func (r *Root) Dir() string { return r.canon }

// Protected returns the absolute paths this Root refuses inside the workspace.
func (r *Root) Protected() []string {
	out := make([]string, len(r.protected))
	for i, p := range r.protected {
		out[i] = p.abs
	}
	return out
}

// haveOpenat2 probes once whether the kernel answers openat2 with the resolve flags this
// package uses. ENOSYS is an old kernel; EPERM is a seccomp filter (older container
// runtimes) that does not know the call. On any failure of the probe the component walk is
// used instead: it is slower, never weaker.
var haveOpenat2 = sync.OnceValue(func() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
})
