package runlist

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"buddi/plugins/developer/confine"
)

// This file is §5 item 3 on the filesystem, where path.go is its lexical half: "Every path
// — operand or flag value — resolves inside the workspace: not absolute, no .., no ~, no
// symlink component, and resolved against the directory the command will run in (cwd,
// itself resolved inside the workspace)". With Input.Root, the run directory and every path
// the command names are walked through the workspace's confinement before anything is
// spawned, and a symbolic link anywhere on the way is a refusal (§2, §9: "a link is a way
// out whatever it points at today"), a dangling one included, in the part that exists of a
// path that does not exist yet too.
//
// Which words are paths is the table's answer when the table admits the command (grammar.go
// records each path it reads, with what the program does with it); for any other command —
// not on the list, a flag not in the table, a remembered one, any mode — every reading of
// every word (itself, after an =, after a single-dash letter, each part of a : or ,
// list) is looked at, and one that goes through a link refuses the command: a card showing
// home/.bashrc would tell the owner a path inside the workspace, and it is not one.

// role is what a program does with a path the grammar read.
type role uint8

const (
	// roleRead: it reads the path, or the tree below it without following links (grep -r,
	// rg, find, ls), or hands it to the project's own code.
	roleRead role = iota
	// roleWrite: it may write the path or files below it (prettier --write, eslint --fix,
	// ruff format, black, go fmt).
	roleWrite
	// roleEntries: it reads the entries of a directory, following links in it (diff).
	roleEntries
	// roleTree: it reads the whole tree below a directory, following links (diff -r).
	roleTree
	// roleModule: a Python module name, imported from the run directory (python -m,
	// unittest's names, pytest -p).
	roleModule
)

// pathUse is one path a command names, as the grammar read it.
type pathUse struct {
	// word is the word of the command it was read from.
	word string
	// path is the path itself (a go pattern without its /..., a module name).
	path string
	// flag is the flag whose value it is, or "".
	flag string
	role role
}

// The bounds of the filesystem check: a command past them asks.
const (
	// maxUses bounds the paths of a command the table admits.
	maxUses = 1024
	// maxReadings bounds the readings of the words of any other command, and
	// maxReadingBytes their length together.
	maxReadings     = 1024
	maxReadingBytes = 64 << 10
	// treeEntries bounds the entries a recursive diff's directory may hold to be checked.
	treeEntries = 20000
)

// refusedf builds a finding that refuses the command whatever the mode or the owner says.
func refusedf(rule Rule, flag, word, format string, args ...any) *finding {
	return &finding{rule: rule, flag: flag, word: word, refuse: true, reason: fmt.Sprintf(format, args...)}
}

// sentence is a confinement refusal without its full stop, to follow "program: ".
func sentence(err error) string { return strings.TrimSuffix(err.Error(), ".") }

// resolveDir resolves the run directory cwd through root, as developer.read resolves a
// path: inside the workspace, no link, not protected, an existing directory. It returns
// the directory relative to the workspace.
func resolveDir(root *confine.Root, name, cwd string) (string, *finding) {
	p, err := root.Resolve("", cwd)
	var (
		sl *confine.SymlinkError
		pr *confine.ProtectedError
		ou *confine.OutsideError
		nd *confine.NotDirError
	)
	switch {
	case errors.As(err, &sl):
		return "", refusedf(RuleCwdSymlink, "", cwd, "%s: the directory %q goes through a symbolic link at %q, and links inside the workspace are refused whatever they point at", name, cwd, sl.Component)
	case errors.As(err, &pr):
		return "", refusedf(RuleCwdProtected, "", cwd, "%s: the directory %q is inside %s, which is refused even inside a workspace", name, cwd, pr.Protected)
	case errors.As(err, &ou):
		return "", refusedf(RuleCwdOutside, "", cwd, "%s: the directory %q resolves outside the workspace %q", name, cwd, root.Dir())
	case errors.As(err, &nd):
		return "", refusedf(RuleCwdMissing, "", cwd, "%s: the directory %q goes through %q, which is not a directory", name, cwd, nd.Component)
	case err != nil:
		return "", refusedf(RuleCwdMissing, "", cwd, "%s: the directory %q cannot be resolved inside the workspace: %v", name, cwd, err)
	case !p.Exists:
		return "", refusedf(RuleCwdMissing, "", cwd, "%s: the directory %q does not exist", name, cwd)
	case !p.Mode.IsDir():
		return "", refusedf(RuleCwdMissing, "", cwd, "%s: %q is not a directory to run in", name, cwd)
	}
	return p.Rel, nil
}

// checker resolves a command's paths through the workspace's confinement.
type checker struct {
	root *confine.Root
	// rel is the run directory, relative to the workspace.
	rel string
	// prog names the program in reasons.
	prog string
}

// uses checks the paths the table read (see role). A link refuses the command, and so does
// a write under .git or a hooks directory; a protected path, or one that could not be
// checked, makes it ask.
func (c checker) uses(uses []pathUse) *finding {
	if len(uses) > maxUses {
		return &finding{rule: RuleUnchecked, reason: fmt.Sprintf(
			"%s names %d paths, more than the %d that are checked for links", c.prog, len(uses), maxUses)}
	}
	for _, u := range uses {
		var fd *finding
		if u.role == roleModule {
			fd = c.module(u)
		} else {
			fd = c.use(u)
		}
		if fd != nil {
			return fd
		}
	}
	return nil
}

// use checks one path.
func (c checker) use(u pathUse) *finding {
	p, fd := c.resolve(u, u.path)
	if fd != nil || p == nil {
		return fd
	}
	switch u.role {
	case roleWrite:
		if p.InGit {
			return refusedf(RuleNoWrite, u.flag, u.word, "%s may write %q, which is inside .git, and .git is never written", c.prog, u.path)
		}
		dir, in, err := c.root.InHooks(*p)
		if err != nil {
			return &finding{rule: RuleUnchecked, flag: u.flag, word: u.word, reason: fmt.Sprintf(
				"%s may write %q, and where git runs hooks from there could not be told: %v", c.prog, u.path, err)}
		}
		if in {
			return refusedf(RuleNoWrite, u.flag, u.word, "%s may write %q, which is inside %s, where git runs hooks from, and like .git it is never written", c.prog, u.path, c.rel2(dir))
		}
	case roleEntries, roleTree:
		if p.Exists && p.Mode.IsDir() {
			return c.tree(u, u.role == roleTree)
		}
	}
	return nil
}

// rel2 names an absolute path relative to the workspace when it is inside it.
func (c checker) rel2(abs string) string {
	if r, ok := within(c.root.Dir(), abs); ok {
		return fmt.Sprintf("%q", r)
	}
	return fmt.Sprintf("%q", abs)
}

// resolve resolves path for u, translating the confinement's answer: nil and no finding
// for a path the program may be given whether or not it exists.
func (c checker) resolve(u pathUse, path string) (*confine.Path, *finding) {
	p, err := c.root.Resolve(c.rel, path)
	if err == nil {
		return &p, nil
	}
	var (
		sl *confine.SymlinkError
		sw *confine.SwappedError
		pr *confine.ProtectedError
		nd *confine.NotDirError
	)
	switch {
	case errors.As(err, &sl):
		return nil, refusedf(RuleSymlink, u.flag, u.word, "%s: %s", c.prog, sentence(err))
	case errors.As(err, &sw):
		return nil, refusedf(RuleSymlink, u.flag, u.word, "%s: %s", c.prog, sentence(err))
	case errors.As(err, &pr):
		return nil, &finding{rule: RuleProtected, flag: u.flag, word: u.word, reason: fmt.Sprintf(
			"%s: %q is inside %s, which is refused even inside a workspace", c.prog, path, pr.Protected)}
	case errors.As(err, &nd):
		// The program gets "not a directory" for itself; nothing is reached through it.
		return nil, nil
	}
	return nil, &finding{rule: RuleUnchecked, flag: u.flag, word: u.word, reason: fmt.Sprintf(
		"%s: %q could not be checked for links: %v", c.prog, path, err)}
}

// tree checks a directory a program reads following links: its entries, or its whole
// tree, must hold no link.
func (c checker) tree(u pathUse, all bool) *finding {
	lim := confine.Limits{MaxEntries: treeEntries, MaxDepth: 1}
	if all {
		lim.MaxDepth = 0
	}
	sum, err := c.root.Walk(c.rel, u.path, lim, func(confine.Entry) error { return nil })
	how := "the entries of"
	if all {
		how = "everything below"
	}
	switch {
	case err != nil:
		return &finding{rule: RuleUnchecked, word: u.word, reason: fmt.Sprintf(
			"%s: %q could not be checked for links: %v", c.prog, u.path, err)}
	case sum.SkippedLinks > 0:
		return refusedf(RuleSymlink, u.flag, u.word,
			"%s reads %s %q following symbolic links, and %d are there, which links inside the workspace are refused whatever they point at",
			c.prog, how, u.path, sum.SkippedLinks)
	case sum.SkippedProtected > 0:
		return &finding{rule: RuleProtected, word: u.word, reason: fmt.Sprintf(
			"%s reads %s %q, which holds a path refused even inside a workspace", c.prog, how, u.path)}
	case sum.EntryLimitReached || all && sum.DepthLimitReached:
		return &finding{rule: RuleUnchecked, word: u.word, reason: fmt.Sprintf(
			"%s reads %s %q following links, and it is too large to check for them", c.prog, how, u.path)}
	}
	return nil
}

// module checks a Python module name: Python imports a.b.c from a/b/c.py or a/b/c/ in the
// run directory first, so none of them may go through a link.
func (c checker) module(u pathUse) *finding {
	cands := []string{u.path}
	if !strings.ContainsRune(u.path, '/') {
		dotted := strings.ReplaceAll(u.path, ".", "/")
		cands = append(cands, dotted, dotted+".py")
	}
	for _, cand := range cands {
		if cand == "" || strings.HasPrefix(cand, "/") || climbs(cand) {
			continue
		}
		if _, fd := c.resolve(u, cand); fd != nil && fd.refuse {
			return fd
		}
	}
	return nil
}

// words checks every reading of every word of a command the table does not admit: one
// that goes through a link refuses it. argv[0] is looked at only when it names a path.
func (c checker) words(argv []string) *finding {
	n, size := 0, 0
	for i, w := range argv {
		if i == 0 && !strings.ContainsRune(w, '/') {
			continue
		}
		for _, r := range pathReadings(w) {
			n, size = n+1, size+len(r)
			if n > maxReadings || size > maxReadingBytes {
				return &finding{rule: RuleUnchecked, word: w, reason: fmt.Sprintf(
					"%s: the command has more than %d words that could be paths to check for links", c.prog, maxReadings)}
			}
			if fd := c.reading(w, r); fd != nil {
				return fd
			}
		}
	}
	return nil
}

// reading checks one reading r of word w: through a link, read against the run directory,
// or — when it climbs out or is absolute — lexically placed back inside the workspace.
func (c checker) reading(w, r string) *finding {
	u := pathUse{word: w, path: r, flag: flagOf(w)}
	_, err := c.root.Resolve(c.rel, r)
	var ou *confine.OutsideError
	if errors.As(err, &ou) || errors.Is(err, fs.ErrNotExist) {
		abs := filepath.Clean(r)
		if !filepath.IsAbs(r) {
			abs = filepath.Join(c.root.Dir(), filepath.FromSlash(c.rel), filepath.FromSlash(r))
		}
		if _, inside := within(c.root.Dir(), abs); !inside {
			return nil
		}
		_, err = c.root.Resolve("", abs)
	}
	var (
		sl *confine.SymlinkError
		sw *confine.SwappedError
	)
	if errors.As(err, &sl) || errors.As(err, &sw) {
		return refusedf(RuleSymlink, u.flag, w, "%s: %s", c.prog, sentence(err))
	}
	return nil
}

// pathReadings are the ways a word may be read as a path (readings: itself, after each =,
// after a single-dash letter), and each part of them split at : and , (search paths and
// lists), without repeats or empty ones.
func pathReadings(w string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, r := range readings(w) {
		add(r)
		if strings.ContainsAny(r, ":,") {
			for _, part := range strings.FieldsFunc(r, func(c rune) bool { return c == ':' || c == ',' }) {
				add(part)
			}
		}
	}
	return out
}
